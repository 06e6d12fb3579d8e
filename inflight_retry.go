package ratelimit

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/slots"
)

// The Retry-After of an in-flight denial, what its observer is told, and
// what it logs.

// ran learns that a request ran for d: the moving average of how long the
// limit's requests run moves an eighth of the way to d.
func (f *inFlight) ran(d time.Duration) {
	for {
		old := f.typical.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/8
		}
		if f.typical.CompareAndSwap(old, next) {
			return
		}
	}
}

// retryAfter is the Retry-After, in whole seconds, of a request that found
// every slot held: about how long a request runs, when one of the slots
// may be free again; at least 1.
func (f *inFlight) retryAfter() int64 {
	return retryAfterSeconds(time.Duration(f.typical.Load()))
}

// told tells the observer, if any, of the store's answer to a request of
// key: allowed with a slot, denied without (would deny, in dry run), or
// errored.
func (f *inFlight) told(r *http.Request, key string, slot slots.Slot, err error, latency time.Duration) {
	if f.observer.Decision == nil {
		return
	}
	d := Decision{Limiter: f.name, Policy: f.name, Source: FromStore, Latency: latency, Err: err, Request: r, First: true,
		Remaining: max(0, f.max-slot.Running)}
	switch {
	case err != nil:
		d.Outcome, d.Source, d.Remaining = OutcomeErrored, FromFailurePolicy, 0
	case slot.Acquired:
		d.Outcome = OutcomeAllowed
	case f.dryRun:
		d.Outcome = OutcomeDryRunDenied
	default:
		d.Outcome = OutcomeDenied
	}
	if f.observer.Keys {
		d.Key = key
	}
	f.observer.Decision(d)
}

// logError is the default error handler: it logs what the limit could not
// decide at level Error, at most once a second, with the count of those it
// left out, as a Limiter's does.
func (f *inFlight) logError(r *http.Request, err error) {
	ok, suppressed := f.errLog.allow(f.now())
	if !ok {
		return
	}
	policy := "fail open"
	if f.closed {
		policy = "fail closed"
	}
	ctx, args := requestArgs(r, "limiter", f.name, "err", err, "policy", policy, "suppressed", suppressed)
	logger := f.log
	if logger == nil {
		logger = slog.Default()
	}
	logger.ErrorContext(ctx, "ratelimit: in-flight slot not decided by the store", args...)
}

// logWouldDeny logs a request that dry run let run without a slot, at
// most once a second, with the count of those it left out.
func (f *inFlight) logWouldDeny(r *http.Request) {
	ok, suppressed := f.dryLog.allow(f.now())
	if !ok {
		return
	}
	ctx, args := requestArgs(r, "limiter", f.name, "limit", strconv.Itoa(f.max)+" at once", "suppressed", suppressed)
	slog.InfoContext(ctx, "ratelimit: dry run: would deny", args...)
}

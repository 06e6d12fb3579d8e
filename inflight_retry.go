package ratelimit

import (
	"net/http"
	"time"
)

// The Retry-After of an InFlight denial, and what its observer is told.

// ran learns that a request ran for d: the moving average of how long the
// limit's requests run moves an eighth of the way to d.
func (f *InFlight) ran(d time.Duration) {
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
func (f *InFlight) retryAfter() int64 {
	return retryAfterSeconds(time.Duration(f.typical.Load()))
}

// told tells the observer, if any, of the store's answer to a request of
// key: allowed with a slot, denied without, or errored.
func (f *InFlight) told(r *http.Request, key string, slot Slot, err error, latency time.Duration) {
	if f.observer.Decision == nil {
		return
	}
	d := Decision{Limiter: f.name, Policy: f.name, Source: FromStore, Latency: latency, Err: err, Request: r, First: true,
		Remaining: max(0, f.max-slot.Running)}
	switch {
	case err != nil:
		d.Outcome, d.Source, d.Remaining = Errored, FromFailurePolicy, 0
	case slot.Acquired:
		d.Outcome = Allowed
	default:
		d.Outcome = Denied
	}
	if f.observer.Keys {
		d.Key = key
	}
	f.observer.Decision(d)
}

package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// logEvery is how often a limiter logs the same kind of event at most.
const logEvery = time.Second

// throttledLog logs an event at most once per logEvery, with the number of
// events it left out since the last line: a store that fails under load
// writes one line a second, not one per request.
type throttledLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether an event at now may be logged, and how many events
// were left out before it.
func (t *throttledLog) allow(now time.Time) (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < logEvery {
		t.suppressed++
		return false, 0
	}
	n := t.suppressed
	t.last, t.suppressed = now, 0
	return true, n
}

// logError is the default error handler: it logs the limiter's failed
// decisions at level Error, at most once a second, with the count of those
// it left out; a misconfigured store's apart, at most once a second too.
func (l *Limiter) logError(r *http.Request, err error) {
	if errors.Is(err, ErrMisconfiguredStore) {
		l.logMisconfigured(r, err)
		return
	}
	ok, suppressed := l.errLog.allow(l.now())
	if !ok {
		return
	}
	msg, policy := "ratelimit: request not decided by the store", l.failurePolicy()
	switch {
	case isCallError(err) || errors.Is(err, ErrBadConfig): // a bad cost, key, limit or plan: answered 500, no failure policy
		msg, policy = "ratelimit: request refused: its call cannot be decided", "refused (500)"
	case errors.Is(err, errEnded): // the request's own deadline (pass_record.go)
		msg, policy = "ratelimit: request refused: its own deadline passed before the store answered", "refused (503)"
	case errors.Is(err, errWaitEnded): // the request's own deadline, as it waited (shaping.go)
		msg, policy = "ratelimit: request refused: its own deadline passed while it waited for its tokens", "refused (503)"
	case errors.Is(err, syscall.ECONNREFUSED):
		msg += ": it refused the connection" // nothing listens there: down, or a wrong address
	}
	ctx, args := requestArgs(r, "limiter", l.name, "err", err, "policy", policy, "suppressed", suppressed)
	l.logger().ErrorContext(ctx, msg, args...)
}

// requestArgs returns the context to log r with, and args with r's method
// and path; r is nil for a decision of Limiter.AllowN.
func requestArgs(r *http.Request, args ...any) (context.Context, []any) {
	if r == nil {
		return context.Background(), args
	}
	return context.WithoutCancel(r.Context()), append(args, "method", r.Method, "path", r.URL.Path)
}

// logMisconfigured logs a store error that no retry cures, apart from the
// passing failures so that they never hide it, at most once a second.
func (l *Limiter) logMisconfigured(r *http.Request, err error) {
	ok, suppressed := l.misconfigLog.allow(l.now())
	if !ok {
		return
	}
	ctx, args := requestArgs(r, "limiter", l.name, "err", err, "policy", l.failurePolicy(), "suppressed", suppressed)
	l.logger().ErrorContext(ctx, "ratelimit: the store is misconfigured: every decision fails until its configuration is fixed", args...)
}

// logWouldDeny logs a request that dry run let through over its limit, at
// most once a second, with the count of those it left out.
func (l *Limiter) logWouldDeny(r *http.Request, res Result) {
	ok, suppressed := l.dryLog.allow(l.now())
	if !ok {
		return
	}
	ctx, args := requestArgs(r, "limiter", l.name, "limit", res.Limit.String(), "retry_after", res.RetryAfter, "suppressed", suppressed)
	l.logger().InfoContext(ctx, "ratelimit: dry run: would deny", args...)
}

// failurePolicy names what answers a request the store did not decide.
func (l *Limiter) failurePolicy() string {
	switch {
	case l.fallback != nil:
		return "fallback"
	case l.failClosed:
		return "fail closed"
	}
	return "fail open"
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout is the time budget of a decision on a store that is not
// [Local], such as Redis, unless [WithTimeout] sets another. A Redis round
// trip takes well under a millisecond on a LAN and a few on a busy server;
// 100 ms leaves room for that and a garbage-collection pause, while a Redis
// that hangs costs a request at most a tenth of a second (and, once the
// [Breaker] opens, nothing).
const DefaultTimeout = 100 * time.Millisecond

// ErrTimeout reports a store that did not answer within the limiter's time
// budget (see [WithTimeout]). It is a store failure: the failure policy
// answers the request. Errors that wrap it also wrap
// context.DeadlineExceeded.
var ErrTimeout = errors.New("ratelimit: store did not answer in time")

// Local is implemented by stores that decide in the process's own memory
// and never wait on I/O, such as store/memory. A limiter calls a Local store
// directly: no time budget, no breaker, no deny cache, since it cannot hang
// and has nothing to spare. Wrappers of a store should forward Local.
type Local interface {
	Local() bool
}

// isLocal reports whether s says it is [Local].
func isLocal(s Store) bool {
	l, ok := s.(Local)
	return ok && l.Local()
}

// WithTimeout sets the time budget of each decision: a store that has not
// answered after d is a failure ([ErrTimeout]) and the failure policy
// answers the request (fail open, [WithFailClosed] or [WithFallback]). The
// bound holds whatever the store's client does with contexts: the store is
// called on a goroutine of its own and left to finish in the background,
// its context cancelled (a call that never returns keeps its goroutine:
// the [Breaker] bounds how many calls an outage leaves waiting, and client
// read timeouts, see docs/redis.md, how long). The default is [DefaultTimeout] for stores that
// are not [Local], none for Local ones; d == 0 turns the bound off and a
// negative d is an error.
func WithTimeout(d time.Duration) Option {
	return func(l *Limiter) error {
		if d < 0 {
			return fmt.Errorf("ratelimit: WithTimeout(%v): negative", d)
		}
		l.timeout, l.timeoutSet = d, true
		return nil
	}
}

// within runs call and waits at most d for its answer; d <= 0 waits as
// long as the call takes. The call runs on a goroutine of its own, with a
// context cancelled when the wait ends; its answer goes to a buffered
// channel, so a call that answers after the wait ends leaves nothing
// behind, and what it returns is never read.
func within[T any](ctx context.Context, d time.Duration, call func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		return call(ctx)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, d, timeoutCause(d))
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := call(ctx)
		done <- answer{v, err}
	}()
	var zero T
	select {
	case a := <-done:
		if a.err != nil && ctx.Err() != nil {
			return zero, context.Cause(ctx) // say why the context ended
		}
		return a.v, a.err
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}

// allowWithin is store.AllowN within d.
func allowWithin(ctx context.Context, d time.Duration, store Store, key string, limit Limit, n int) (Result, error) {
	if d <= 0 { // no closure for the calls that need no goroutine
		return store.AllowN(ctx, key, limit, n)
	}
	return within(ctx, d, func(ctx context.Context) (Result, error) { return store.AllowN(ctx, key, limit, n) })
}

// allowAllWithin is AllowAll within d: the call writes results of its own,
// copied out only if it answered in time.
func allowAllWithin(ctx context.Context, d time.Duration, store Store, takes []Take, results []Result) error {
	if d <= 0 {
		return AllowAll(ctx, store, takes, results)
	}
	own, err := within(ctx, d, func(ctx context.Context) ([]Result, error) {
		own := make([]Result, len(results))
		return own, AllowAll(ctx, store, takes, own)
	})
	copy(results, own)
	return err
}

// callEnd is what became of a store call.
type callEnd int

const (
	answered    callEnd = iota // the store decided, or refused the call's arguments
	clientGone                 // the client went away: neither served nor reported
	storeFailed                // the store failed: the failure policy answers
)

// settle classifies how a store call ended with err, and tells the
// breaker, if any, whose probe the call may have been.
func (l *Limiter) settle(ctx context.Context, err error, probe bool) callEnd {
	end := storeFailed
	switch {
	case err == nil, isCallError(err):
		end = answered // a bad cost or key: the store is fine, the call was wrong
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		end = clientGone
	}
	if l.breaker != nil {
		switch end {
		case answered:
			l.breaker.success(probe)
		case clientGone:
			l.breaker.release(probe)
		default:
			l.breaker.failure(l.now(), probe)
		}
	}
	return end
}

// timeoutCause is the error of a store call that ran out of its budget d.
func timeoutCause(d time.Duration) error {
	return fmt.Errorf("%w after %v: %w", ErrTimeout, d, context.DeadlineExceeded)
}

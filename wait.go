package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Wait is WaitN(ctx, key, 1).
func (l *Limiter) Wait(ctx context.Context, key string) error {
	return l.WaitN(ctx, key, 1)
}

// WaitN blocks until n tokens of key's budget are the caller's, or ctx is
// done, for calls a service makes rather than answers (a third-party API
// with a budget shared by every instance), as x/time/rate's WaitN: an error
// at once if ctx is done or its deadline comes before the tokens would,
// and the tokens given back if ctx ends while waiting.
//
// Each try is a decision of the limiter's one pass, as [Limiter.AllowN]
// makes: the time budget, the breaker, blocks, the failure policy and the
// observer (its Decision.Delay is the wait) apply. On a limiter of one
// token-bucket policy over a [Reserver] store, without blocks, WaitN books
// the tokens in one store call and sleeps until their instant; waiters are
// served in order, and one that gives up gives its tokens back. Otherwise
// it takes, and after a denial tries again after its RetryAfter: the
// budget holds (a blocked key waits for its block's end, and each try
// during the block spends the budget as any blocked request does), but
// waiters are not served in order. While the store fails, the fallback
// decides each try, booking or not, and its denial is waited out as a
// take's is. A store that fails, with no fallback, is the caller's error,
// also told to the error handler.
func (l *Limiter) WaitN(ctx context.Context, key string, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return ErrEmptyKey
	}
	p := l.getPass()
	defer passes.Put(p)
	if err := l.keyCall(ctx, key, p); err != nil {
		return err
	}
	for {
		if l.booker != nil {
			p.op, p.maxWait = book, time.Duration(MaxPeriod) // reserve bounds it by ctx's deadline (shaping.go)
		}
		o := l.run(ctx, n, p)
		o.delay = p.booking.Delay
		if l.observer.Decision != nil {
			l.observe(nil, p, o)
		}
		switch o.end {
		case badCost, gone, badKey:
			return o.err
		case undecided:
			l.onError(nil, o.err)
			return o.err
		}
		if o.err != nil {
			l.onError(nil, o.err) // the fallback decided
		}
		if o.res.Allowed || l.dryRun {
			if o.delay > 0 && l.waitBound(ctx, o.delay) < o.delay {
				// Booked within the deadline as the call was sent; the
				// store's answer took the rest.
				l.cancelBooking(ctx, p) // shaping.go
				return errPastDeadline(n)
			}
			if err := sleep(ctx, o.delay); err != nil {
				l.cancelBooking(ctx, p) // shaping.go
				return err
			}
			return nil
		}
		// A booking the store refused could not be booked within the
		// deadline; a denial of the fallback's (the store failing) says
		// when to try again, as a take's does.
		refused := p.op == book && o.source == FromStore
		if _, ok := ctx.Deadline(); ok && (refused || l.waitBound(ctx, o.res.RetryAfter) < o.res.RetryAfter) {
			return errPastDeadline(n)
		}
		if err := sleep(ctx, o.res.RetryAfter); err != nil {
			return err
		}
	}
}

// errPastDeadline is WaitN's error when its tokens come after its
// context's deadline, as x/time/rate's.
func errPastDeadline(n int) error {
	return fmt.Errorf("ratelimit: Wait(n=%d) would exceed the context's deadline", n)
}

// sleep waits d, or until ctx is done, and returns ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

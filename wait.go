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
// On a limiter of one token-bucket policy over a [Reserver] store, WaitN
// books the tokens in one store call and sleeps until their instant;
// waiters are served in order, and a store that fails or takes longer
// than the time budget ([WithTimeout]) is an error, as is an open breaker,
// which spares the store the call. The observer is told of the booking
// (its Decision.Delay is the wait). The deny cache is not asked: a
// booking is not a denial. Otherwise it takes
// through [Limiter.AllowN]
// and, after a denial, tries again after its RetryAfter: the budget holds,
// but waiters are not served in order.
func (l *Limiter) WaitN(ctx context.Context, key string, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return ErrEmptyKey
	}
	rs, ok := l.store.(Reserver)
	if pol := &l.policies[0]; ok && len(l.policies) == 1 && pol.key == nil && pol.limit.Algorithm == TokenBucket {
		sk, err := pol.storeKey(key)
		if err != nil {
			return err
		}
		return l.waitReserved(ctx, rs, sk, pol.limit, n)
	}
	for {
		res, err := l.AllowN(ctx, key, n)
		if err != nil || res.Allowed {
			return err
		}
		if d, ok := ctx.Deadline(); ok && l.now().Add(res.RetryAfter).After(d) {
			return fmt.Errorf("ratelimit: Wait(n=%d) would exceed the context's deadline", n)
		}
		if err := sleep(ctx, res.RetryAfter); err != nil {
			return err
		}
	}
}

// waitReserved books n tokens of sk, within the limiter's time budget for
// a store call and through its breaker, and sleeps until they are the
// caller's, cancelling the booking if ctx ends first. A store that fails,
// or a breaker that is open, is the caller's error, also told to the
// error handler (with a nil request); the observer is told of the
// decision, with its Delay.
func (l *Limiter) waitReserved(ctx context.Context, rs Reserver, sk string, limit Limit, n int) error {
	maxWait := time.Duration(MaxPeriod)
	if d, ok := ctx.Deadline(); ok {
		maxWait = max(d.Sub(l.now()), 0)
	}
	probe := false
	if l.breaker != nil {
		var ok bool
		if ok, probe = l.breaker.allow(l.now()); !ok {
			err := l.breaker.openError()
			l.waited(sk, limit, n, outcome{end: undecided, source: FromFailurePolicy, err: err})
			return err
		}
	}
	start := time.Now()
	r, err := reserveWithin(ctx, l.budget, rs, sk, limit, n, maxWait)
	o := outcome{end: decided, res: r.Result, latency: time.Since(start), delay: r.Delay}
	switch l.settle(ctx, err, probe) {
	case answered:
	case requestEnded:
		return err
	default:
		o = outcome{end: undecided, source: FromFailurePolicy, err: err, latency: o.latency}
		l.waited(sk, limit, n, o)
		return err
	}
	l.waited(sk, limit, n, o)
	if !r.Allowed {
		return fmt.Errorf("ratelimit: Wait(n=%d) would exceed the context's deadline", n)
	}
	if err := sleep(ctx, r.Delay); err != nil {
		// Give the tokens back; a background context, since ctx is done.
		rs.CancelReservation(context.WithoutCancel(ctx), sk, limit, r)
		return err
	}
	return nil
}

// waited tells the error handler and the observer of o, the outcome of a
// booking of n tokens of sk under limit.
func (l *Limiter) waited(sk string, limit Limit, n int, o outcome) {
	if o.err != nil {
		l.onError(nil, o.err)
	}
	if l.observer.Decision == nil {
		return
	}
	p := l.getPass()
	defer passes.Put(p)
	p.takes[0], p.results[0] = Take{Key: sk, Limit: limit, N: n}, o.res
	if o.res.Limit == (Limit{}) {
		p.results[0].Limit = limit
	}
	l.observe(nil, p, o)
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

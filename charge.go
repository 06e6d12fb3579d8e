package ratelimit

import (
	"context"
	"errors"
	"math"
)

// Charge takes n more tokens of key's budget under every policy, after
// the fact: what a request used once the handler knew (tokens, bytes,
// rows). The charge is taken in the store, where every app server sees
// it, even past what the budget holds: the key is then in debt, and its
// next requests are denied until the debt is waited out, as an
// x/time/rate reservation goes negative.
//
// The debt is bounded: a charge takes at most one capacity (the rest is
// forgiven). A token bucket on a [Reserver] store (memory, Redis) goes
// down to at most one capacity below empty, in one store call: a full
// bucket charged a capacity or more is left empty, not in debt, and one
// that was empty one capacity below. A window, or a store that
// cannot book, is charged what it holds, up to n: its count reaches its
// limit and the key waits for the window's end (one store call, two when
// the charge is more than what is left).
//
// A charge is taken once, with ctx's values but not its cancellation (a
// client that hangs up does not escape it), within the time budget and
// through the breaker. While the store fails or the breaker is open it
// makes no call to it: it is charged to the fallback store, if any, and
// kept on this app server as a debt that the key's next requests pay the
// store once it answers (at most one capacity per key). The headers of
// the charged request, sent already, do not show it; those of the
// requests after it do; this app server's deny cache forgets the key, so
// that its next request asks the store. key is the client key, as for [Limiter.AllowN];
// policies with plans read the plan from ctx.
func (l *Limiter) Charge(ctx context.Context, key string, n int) error {
	if key == "" {
		return ErrEmptyKey
	}
	if n < 0 {
		return ErrInvalidCost
	}
	if n == 0 {
		return nil
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	p := l.getPass()
	defer passes.Put(p)
	if err := l.keyCall(ctx, key, p); err != nil { // every policy keyed before any is charged
		return err
	}
	p.op = charge
	o := l.run(ctx, n, p)
	switch {
	case o.end == badCost:
		return o.err
	case o.end == undecided && !errors.Is(o.err, ErrBreakerOpen): // owed; the breaker spared the call
		l.onError(nil, o.err)
		return o.err
	}
	return nil
}

// takeDebts is the store call of a charge: each take's cost, even past
// what its budget holds.
func (l *Limiter) takeDebts(ctx context.Context, p *pass) error {
	for i := range p.takes {
		t := &p.takes[i]
		if err := l.takeDebt(ctx, t.Key, t.Limit, t.N); err != nil {
			return err
		}
		t.N = 0 // charged: nothing left to owe if a later take fails
	}
	return nil
}

// takeDebt takes n tokens of sk even past what its budget holds, as
// Charge says.
func (l *Limiter) takeDebt(ctx context.Context, sk string, limit Limit, n int) error {
	if rs, ok := l.store.(Reserver); ok && limit.Algorithm == TokenBucket {
		bound := limit.fillTime() // at most one capacity below empty
		r, err := reserveWithin(ctx, l.budget, rs, sk, limit, n, bound)
		if err != nil || r.Allowed {
			return err
		}
		// Beyond the bound by RetryAfter: book what fits.
		over := int(math.Ceil(r.RetryAfter.Seconds() * limit.PerSecondRate()))
		if n -= over; n <= 0 {
			return nil
		}
		_, err = reserveWithin(ctx, l.budget, rs, sk, limit, n, bound)
		return err
	}
	var res Result
	if err := allowWithin(ctx, l.budget, l.store, sk, limit, n, &res); err != nil || res.Allowed || res.Remaining == 0 {
		return err
	}
	return allowWithin(ctx, l.budget, l.store, sk, limit, min(n, res.Remaining), &res)
}

// owe keeps the charge of p that the store could not take: on the
// fallback store, and as each key's debt to the store (debt.go).
func (l *Limiter) owe(ctx context.Context, p *pass) {
	for _, t := range p.takes {
		if t.N == 0 {
			continue
		}
		if l.fallback != nil {
			shared := share(t.Limit, l.instances)
			if m := min(t.N, shared.Capacity()); m > 0 {
				l.fallback.AllowN(ctx, t.Key, shared, m)
			}
		}
		l.debts.add(t.Key, t.N, t.Limit.Capacity())
	}
}

package ratelimit

import (
	"context"
	"fmt"
	"slices"
)

// Resetter is implemented by stores that can reset one key's budget, as
// store/memory and store/redis do: support's "unblock this customer".
type Resetter interface {
	// Reset makes key's budget under limit full again, as a key never
	// seen. Arguments are checked as by [ValidateCall] (with n = 0).
	Reset(ctx context.Context, key string, limit Limit) error
}

// Reset makes key's budget full again under every policy of the limiter,
// at once, for support ("unblock this customer"): in the store, with the
// key's block ([WithBlock]), in the fallback store, and on this app server
// its deny cache entries and fallback debt. It resets whatever limit a
// request would choose: every plan's, and a [Policy.LimitFunc]'s (the
// budget its limits share, under the policy's [Policy.Algorithm]), so
// Reset needs no request and no context naming a plan or a customer.
// key is the client key, as
// [Limiter.AllowN] takes it (the limiter hashes and namespaces it the same
// way). The app server that calls Reset serves the key again at once;
// another whose deny cache holds a denial of the key serves it again at
// most its cache's max age later ([WithDenyCacheMaxAge]: 10 s by
// default), asking the store then. A store that does not implement
// [Resetter] makes Reset fail with [ErrNoReset].
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	if _, ok := l.store.(Resetter); !ok {
		return ErrNoReset
	}
	p := l.getPass()
	defer passes.Put(p)
	for i := range l.policies {
		pol := &l.policies[i]
		sk, err := pol.storeKey(key)
		if err != nil {
			return err
		}
		p.takes[i] = Take{Key: sk, Limit: pol.limit}
		if l.blockFor > 0 {
			if err := l.fillBlock(p, i, key); err != nil {
				return err
			}
		}
	}
	p.op = reset
	if o := l.run(ctx, 0, p); o.end != decided {
		return o.err
	}
	return nil
}

// resetAll is the store call of a reset (op reset): every limit of each
// policy's key, and its block, each call within the time budget.
func (l *Limiter) resetAll(ctx context.Context, p *pass) error {
	r := l.store.(Resetter)
	for i := range p.takes {
		pol, sk := &l.policies[i], p.takes[i].Key
		for _, limit := range pol.resetLimits() {
			if err := resetWithin(ctx, l.budget, r, sk, limit); err != nil {
				return fmt.Errorf("ratelimit: Reset: policy %q: %w", pol.name, err)
			}
		}
		if l.blockFor > 0 {
			bt := &p.all[len(p.takes)+i]
			if err := resetWithin(ctx, l.budget, r, bt.Key, bt.Limit); err != nil {
				return fmt.Errorf("ratelimit: Reset: policy %q: block: %w", pol.name, err)
			}
		}
	}
	return nil
}

// forgetAll completes a reset the store made: the fallback store's
// budgets, the deny cache and the debts of the keys are reset on this app
// server too.
func (l *Limiter) forgetAll(ctx context.Context, p *pass) {
	for i, t := range p.takes {
		if fr, ok := l.fallback.(Resetter); ok {
			for _, limit := range l.policies[i].resetLimits() {
				fr.Reset(ctx, t.Key, share(limit, l.instances))
			}
		}
		if l.denies != nil {
			l.denies.forget(t.Key)
		}
		if l.debts != nil {
			l.debts.paid(t.Key, l.debts.owed(t.Key))
		}
	}
}

// resetLimits returns the limits under which policy pol keeps a key's
// budget, each once: its limit, every plan's, or for a LimitFunc its
// placeholder, of the policy's Algorithm. A store keeps a key's budget per
// algorithm whatever the limit's numbers, and the limits of one policy
// share one (plans.go, limitfunc.go), so resetting under these resets
// whatever limit a request chose.
func (pol *policy) resetLimits() []Limit {
	limits := []Limit{pol.limit}
	for _, pl := range pol.plans {
		if !slices.ContainsFunc(limits, func(l Limit) bool { return decidesAlike(l, pl.limit) }) {
			limits = append(limits, pl.limit)
		}
	}
	return limits
}

package ratelimit

// The pass's first stage: a request keyed under every policy, each take
// with its store key and the limit its context chooses.

import (
	"context"
	"net/http"
)

// keyRequest keys r under every policy: keyFunc for those without a
// KeyFunc of their own. Its error is the KeyFunc's (an empty key is a
// missing one).
func (l *Limiter) keyRequest(r *http.Request, keyFunc KeyFunc, p *pass) error {
	own, err := requestKey(keyFunc, r)
	if err != nil {
		return err
	}
	for i := range l.policies {
		pol := &l.policies[i]
		key := own
		if pol.key != nil {
			if key, err = requestKey(pol.key, r); err != nil {
				return err
			}
		}
		if err := l.fillTake(r.Context(), p, i, key); err != nil {
			return err
		}
	}
	if l.hasPlans {
		p.plan = PlanFrom(r.Context())
	}
	return nil
}

// fillTake makes p's take of policy i for the client key: its store key,
// and the limit the request's context chooses (plans.go).
func (l *Limiter) fillTake(ctx context.Context, p *pass, i int, key string) error {
	if err := l.policies[i].take(ctx, key, &p.takes[i]); err != nil {
		return err
	}
	if l.blockFor > 0 {
		return l.fillBlock(p, i, key)
	}
	return nil
}

// take writes to t the policy's take for the client key, n = 0: its
// store key, and the limit ctx chooses (plans.go).
func (pol *policy) take(ctx context.Context, key string, t *Take) error {
	sk, err := pol.storeKey(key)
	if err != nil {
		return err
	}
	// The policy's own limit, as limitFor's first answer, without its
	// call: limitFor is past the inliner's budget, and the call cost every
	// HTTP request about 15 ns (BenchmarkMiddleware).
	if pol.limitFunc == nil && pol.plans == nil {
		t.Key, t.Limit, t.N = sk, pol.limit, 0
		return nil
	}
	limit, _, err := pol.limitFor(ctx)
	if err != nil {
		return err
	}
	t.Key, t.Limit, t.N = sk, limit, 0
	return nil
}

// requestKey runs f on r: its key, or its error (an empty key is a
// missing one).
func requestKey(f KeyFunc, r *http.Request) (string, error) {
	key, err := f(r)
	if err == nil && key == "" {
		err = &MissingKeyError{What: "key", Status: http.StatusBadRequest}
	}
	return key, err
}

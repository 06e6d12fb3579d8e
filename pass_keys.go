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
	if l.joiner != nil && l.policies[i].space.asIs(key) {
		// The store joins the key, if the pass stays a lone take (joinKey).
		p.client = key
		return l.policies[i].takeLimit(ctx, "", &p.takes[i])
	}
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
	return pol.takeLimit(ctx, sk, t)
}

// takeLimit writes to t the take of store key sk, n = 0, under the limit
// ctx chooses (plans.go).
func (pol *policy) takeLimit(ctx context.Context, sk string, t *Take) error {
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

// joiner is implemented by a Local store that decides a key given in two
// parts as it decides their join (store/memory's AllowJoinedTo, which
// writes the Result in place: by value, a Limit and a Result crossing the
// call cost about 14 ns of the 70 a pass added). A limiter
// on it makes no store key for a lone take of a key kept as it is: that
// key's allocation and the key cache's lookups were a third of what a
// Limiter added to the memory store's decision at 100,000 keys.
type joiner interface {
	AllowJoinedTo(ctx context.Context, prefix, key string, limit *Limit, n int, res *Result) error
}

// joinerOf returns store as a joiner if the limiter's takes can leave
// their key to it: a Local store called without a time budget, one
// policy, and nothing beside the store call that reads a take's key (no
// blocks, deny cache, debts, fallback, or observer told the keys).
func (l *Limiter) joinerOf(store Store) joiner {
	j, ok := store.(joiner)
	if !ok || !isLocal(store) || l.budget != nil || len(l.policies) > 1 || l.blockFor > 0 ||
		l.denies != nil || l.debts != nil || l.fallback != nil || l.observer.Decision != nil && l.observer.Keys {
		return nil
	}
	return j
}

// joinKey makes the store key of p's take that the store was to join
// (fillTake) when p asks more than a take: a booking, a charge, a refund,
// a reset or CountTakes give the store whole keys, from the key cache as
// fillTake would have (the key is kept as it is: no error).
func (l *Limiter) joinKey(p *pass) {
	if t := &p.takes[0]; t.Key == "" && p.op != take {
		t.Key, _ = l.policies[0].storeKey(p.client)
	}
}

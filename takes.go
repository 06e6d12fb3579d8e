package ratelimit

// Requests of several takes, each with its own key, limit and cost, such
// as an Envoy rate-limit request's descriptors: AllowTakes and
// RefundTakes walk the one pass (pass.go) with the caller's takes in place
// of the limiter's policies.

import (
	"context"
	"fmt"
	"time"
)

// AllowTakes decides a request of several takes, each with its own client
// key, limit and cost (Take.N, 0 to report without taking), all or
// nothing, through the limiter's pass: the same namespace as the
// keys of [Limiter.AllowN] (each take's key is stored under the limiter's
// first policy, so give different limits different keys), time budget,
// breaker, failure policy, deny cache and observer,
// which hears each take as the limiter's first policy. The limiter's own
// limits are not used: each take carries its own. A take's key must be
// distinct within the call.
//
// It writes the decision of takes[i] to results[i] and reports whether the
// request may go on, whatever the error:
//   - decided by the store: each result as the store answered it (a
//     denial takes nothing from any take, as [MultiStore.AllowAll] says:
//     the takes are decided in one atomic step on a MultiStore, see
//     [AllowAll] for other stores; on Redis Cluster the takes' distinct
//     keys are in different slots, so they are decided as AllowAll says
//     for keys that are not: each take, then, if one is denied, the
//     others refunded, which a concurrent request may see spent until
//     then); a take
//     denied by the deny cache alone leaves the others' results full and
//     untouched, as unknown;
//   - decided by the fallback store, because the store failed: its
//     results (all or nothing), and the store's error,
//     also told to the error handler;
//   - undecided (the store failed, no fallback): every result Allowed
//     unless the limiter fails closed, with the limit and nothing
//     remaining, and the store's error, also told to the error handler;
//   - dry run: a denial is logged and reported allowed;
//   - invalid arguments (an empty key, an invalid limit, a cost out of
//     range, two takes of one key) or a done context: false and the error.
//
// A limiter made [WithBlock] refuses the call with an error.
func (l *Limiter) AllowTakes(ctx context.Context, takes []Take, results []Result) (bool, error) {
	return l.decideTakes(ctx, takes, results, false)
}

// CountTakes is [Limiter.AllowTakes] for takes that count as counters
// incremented whatever the answer (an Envoy rate-limit service's
// default): each take is decided on its own, an allowed take takes its
// cost, a denied [FixedWindow] take (calendar windows too) takes what its
// window still holds, up to its cost, so that the window is full, and a
// denied take of another algorithm takes nothing. The request passes only
// if every take is allowed. One store call per take, two for a window
// that fills, each within the time budget; a take the deny cache
// ([WithDenyCache]) knows the store would deny, and take nothing of, is
// answered from it without a call (a bucket's, a sliding window's, a full
// fixed window's).
// While the store fails, the fallback store decides, all or nothing, the
// takes the store had not counted when it failed (never one twice), and
// the store is charged what the fallback admitted once it answers again,
// take by take, as [WithFallback] says.
func (l *Limiter) CountTakes(ctx context.Context, takes []Take, results []Result) (bool, error) {
	return l.decideTakes(ctx, takes, results, true)
}

// decideTakes is AllowTakes, or with countEach CountTakes.
func (l *Limiter) decideTakes(ctx context.Context, takes []Take, results []Result, countEach bool) (bool, error) {
	if err := l.checkTakes(takes, results); err != nil {
		return false, err
	}
	if len(takes) == 0 {
		return true, nil
	}
	p := l.getPass()
	defer passes.Put(p)
	if err := l.fillTakes(p, takes); err != nil {
		return false, err
	}
	if countEach {
		p.op = each
	}
	o := l.run(ctx, 0, p)
	if l.observer.Decision != nil {
		l.observeTakes(p, o)
	}
	switch o.end {
	case badCost, gone:
		return false, o.err
	case undecided:
		l.onError(nil, o.err)
		for i, t := range takes {
			results[i] = Result{Allowed: !l.failClosed, Limit: t.Limit}
		}
		return !l.failClosed, o.err
	}
	copy(results, p.results)
	if o.err != nil {
		l.onError(nil, o.err)
	}
	if !o.res.Allowed && l.dryRun {
		l.logWouldDeny(nil, o.res)
		return true, o.err
	}
	return o.res.Allowed, o.err
}

// RefundTakes gives back each take's N tokens, taken earlier by
// [Limiter.AllowTakes] under the same key and limit, as [Refunder] says:
// a token bucket gains N up to its capacity, a fixed window's count drops
// by N (in its current window; nothing within the first moments of a
// window, when the take may be the previous one's), a sliding window or
// log gives back what it took within the last Period. One pass per take,
// with the time budget and the breaker; while the store fails nothing is
// given back (the safe side of the limit) and the error is returned. The
// store must be a Refunder, as the memory and Redis stores are.
func (l *Limiter) RefundTakes(ctx context.Context, takes []Take) error {
	if _, ok := l.store.(Refunder); !ok {
		return fmt.Errorf("ratelimit: RefundTakes: the store cannot refund: %w", ErrBadConfig)
	}
	if err := l.checkTakes(takes, make([]Result, len(takes))); err != nil {
		return err
	}
	for _, t := range takes {
		if t.N == 0 {
			continue
		}
		if err := l.refundTake(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// refundTake walks the pass of one take's refund.
func (l *Limiter) refundTake(ctx context.Context, t Take) error {
	p := l.getPass()
	defer passes.Put(p)
	if err := l.fillTakes(p, []Take{t}); err != nil {
		return err
	}
	p.op, p.n, p.sent = refund, t.N, time.Now()
	if t.Limit.Algorithm == SlidingWindow || t.Limit.Algorithm == SlidingLog {
		p.sent = p.sent.Add(-t.Limit.Period) // what the trailing Period took
	}
	o := l.run(ctx, t.N, p)
	if o.end != decided {
		return o.err
	}
	return nil
}

// checkTakes checks the arguments of AllowTakes.
func (l *Limiter) checkTakes(takes []Take, results []Result) error {
	if l.blockFor > 0 {
		return fmt.Errorf("ratelimit: AllowTakes: a limiter made WithBlock decides its own policies: %w", ErrBadConfig)
	}
	if len(results) != len(takes) {
		return fmt.Errorf("ratelimit: AllowTakes: %d results for %d takes", len(results), len(takes))
	}
	for i, t := range takes {
		if err := ValidateCall(t.Key, t.Limit, t.N); err != nil {
			return fmt.Errorf("ratelimit: AllowTakes: take %d: %w", i, err)
		}
	}
	return nil
}

// fillTakes makes p's takes of the caller's takes: each key in the
// namespace of the limiter's first policy, each take its own cost.
func (l *Limiter) fillTakes(p *pass, takes []Take) error {
	n := len(takes)
	p.all, p.allRes = sized(p.all, n), sized(p.allRes, n)
	p.takes, p.results = p.all, p.allRes
	p.shared, p.owed = sized(p.shared, n), sized(p.owed, n)
	p.own = true
	for i, t := range takes {
		sk, err := l.policies[0].storeKey(t.Key)
		if err != nil {
			return err
		}
		p.takes[i], p.owed[i] = Take{Key: sk, Limit: t.Limit, N: t.N}, 0
	}
	if err := distinctKeys(p.takes); err != nil {
		return fmt.Errorf("ratelimit: AllowTakes: %w", err)
	}
	return nil
}

// takeEach is the store call of CountTakes: each take on its own, a denied
// window filled up.
// A take carries what its key owes for the fallback's admissions
// (chargeDebts), as a take of AllowN does; a window is filled up to the
// take's own cost. If the store fails, p.done says how many takes it
// counted: the fallback decides the others (fallback.go).
func (l *Limiter) takeEach(ctx context.Context, p *pass) error {
	for i := range p.takes {
		p.done = i
		t, res := &p.takes[i], &p.results[i]
		var sent time.Time
		if l.denies != nil {
			sent = l.now()
			// A take the cache knows the store would deny, and that the
			// store would take nothing of: a bucket's or a sliding
			// window's, or a fixed window's that is full (a denial of
			// AllowTakes leaves a window's rest, which this take fills).
			if cached, ok := l.denies.get(t.Key, t.Limit, t.N, sent); ok && (t.Limit.Algorithm != FixedWindow || cached.Remaining == 0) {
				*res = cached
				continue
			}
		}
		if err := allowWithin(ctx, l.budget, l.store, t.Key, t.Limit, t.N, res); err != nil {
			return err
		}
		if !res.Allowed && t.Limit.Algorithm == FixedWindow && res.Remaining > 0 {
			var fill Result
			if err := allowWithin(ctx, l.budget, l.store, t.Key, t.Limit, min(p.cost(i), res.Remaining), &fill); err != nil {
				return err
			}
			res.Remaining, res.ResetAfter = fill.Remaining, fill.ResetAfter
		}
		if l.denies != nil { // the store's answer, not the cache's, which must not make its denial new
			l.denies.record(t.Key, t.N, asked{sent, l.now()}, *res)
		}
	}
	p.done = len(p.takes)
	return nil
}

// observeTakes tells the observer of each take of AllowTakes, as the
// limiter's first policy.
func (l *Limiter) observeTakes(p *pass, o *outcome) {
	switch o.end {
	case badKey, gone:
		return
	case undecided, badCost:
		l.observePolicy(nil, 0, p.takes[0].Key, Result{}, o, true)
		return
	}
	first := true
	for i, res := range p.results {
		if !o.res.Allowed && res.Allowed {
			continue
		}
		l.observePolicy(nil, 0, p.takes[i].Key, res, o, first)
		first = false
	}
}

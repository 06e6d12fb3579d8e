package ratelimit

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// The one pass a decision takes, for one policy or several: keys → cost
// checked against every policy → deny cache → breaker → store within the
// time budget → failure policy (fallback.go) → one outcome. Admit and AllowN
// (middleware.go) answer from the outcome.

// end is how a decision's pass ended.
type end int

const (
	decided   end = iota // the store, the deny cache or the fallback decided
	badKey               // the KeyFunc failed: a client error, never a decision
	badCost              // the cost or the KeyFunc's configuration is invalid: a programming error
	gone                 // the client went away: neither served nor reported
	undecided            // nothing decided: the failure policy answers
)

// outcome is the result of one decision's pass.
type outcome struct {
	end     end
	res     Result // decided: the result the headers describe, Allowed for the request
	best    int    // the policy res is of
	source  Source
	err     error         // the KeyFunc's, the cost's or the store's (also when the fallback decided)
	latency time.Duration // of the store call; 0 if there was none
	delay   time.Duration // how long the request waited for its tokens (shaping.go, wait.go)
	plan    string        // the request's plan, with several policies and plans
	// policyList is RateLimit-Policy's list of every policy, with a
	// LimitFunc policy among several (limitfunc.go).
	policyList []string
}

// pass holds a decision's takes and results, one per policy; passes are
// pooled so that a decision allocates nothing.
type pass struct {
	takes   []Take   // one per policy: all[:len(policies)]
	results []Result // allRes[:len(policies)]
	all     []Take   // the takes, then with WithBlock each policy's block (block.go)
	allRes  []Result
	shared  []Take // the fallback's
	owed    []int  // the debt each take pays the store (debt.go)
	n       int    // the request's cost

	op      op            // what the pass asks of the store
	maxWait time.Duration // a booking's longest wait (op book)
	booking Reservation   // the booking of op book (shaping.go, wait.go)
	plan    string        // the plan the request's context names, with plans
	sent    time.Time     // when the store call was sent, to settle it (settle.go)
	adm     Admission     // the request's, while it is settled after its handler (settle.go)
}

// op is what a pass asks of the store for its takes.
type op int

const (
	take   op = iota // take the cost now, if every take holds it
	book             // book the cost for the earliest instant within maxWait (Reserver)
	charge           // take the cost even past the budget, as a bounded debt (charge.go)
	refund           // give back the cost that the pass took p.sent ago (settle.go)
	reset            // make the keys' budgets full again (reset.go)
)

var passes = sync.Pool{New: func() any { return new(pass) }}

func (l *Limiter) getPass() *pass {
	p := passes.Get().(*pass)
	n, m := len(l.policies), len(l.policies)
	if l.blockFor > 0 {
		m = 2 * n
	}
	p.all, p.allRes = sized(p.all, m), sized(p.allRes, m)
	p.takes, p.results = p.all[:n], p.allRes[:n]
	p.shared, p.owed = sized(p.shared, n), sized(p.owed, n)
	p.op, p.maxWait = take, 0
	return p
}

// sized returns s with length n, reusing its array if it is large enough.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

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
	t, err := l.policies[i].take(ctx, key)
	if err != nil {
		return err
	}
	p.takes[i] = t
	if l.blockFor > 0 {
		return l.fillBlock(p, i, key)
	}
	return nil
}

// take is the policy's take for the client key, n = 0: its store key,
// and the limit ctx chooses (plans.go).
func (pol *policy) take(ctx context.Context, key string) (Take, error) {
	sk, err := pol.storeKey(key)
	if err != nil {
		return Take{}, err
	}
	limit, _, err := pol.limitFor(ctx)
	if err != nil {
		return Take{}, err
	}
	return Take{Key: sk, Limit: limit}, nil
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

// run decides n tokens of each of p's takes, keyed already, as p.op asks.
func (l *Limiter) run(ctx context.Context, n int, p *pass) outcome {
	if err := l.setCost(n, p); err != nil {
		return outcome{end: badCost, source: FromFailurePolicy, err: err}
	}
	var now time.Time
	if l.denies != nil || l.breaker != nil {
		now = l.now()
		if p.op == take && l.denies != nil && l.cachedDenial(p, now) {
			return l.summarize(p, outcome{source: FromDenyCache})
		}
	}
	if ctx.Err() != nil { // the request ended before the store was asked
		return l.ended(ctx, p, ctx.Err(), 0)
	}
	probe, err := l.enter() // guard.go: the breaker
	if err != nil {
		return l.fallBack(ctx, p, err, 0)
	}
	if l.debts != nil && p.op == take {
		l.chargeDebts(p)
	}
	var start time.Time
	if l.observer.Decision != nil {
		start = time.Now()
	}
	if l.countIf != nil && p.op == take || p.op == book {
		p.sent = time.Now()
	}
	err = l.call(ctx, p)
	var latency time.Duration
	if l.observer.Decision != nil {
		latency = time.Since(start)
	}
	switch l.settle(ctx, err, probe) {
	case answered:
		return l.record(ctx, p, now, latency)
	case refused:
		return outcome{end: badCost, err: err, latency: latency}
	case requestEnded:
		return l.ended(ctx, p, err, latency)
	}
	return l.fallBack(ctx, p, err, latency)
}

// setCost sets the cost of each of p's takes: n, checked against every
// policy; a charge takes at most each policy's capacity.
func (l *Limiter) setCost(n int, p *pass) error {
	if p.op == refund || p.op == reset {
		return nil // the cost and the takes are the pass's own, as taken
	}
	if p.op == charge {
		if n < 0 {
			return fmt.Errorf("%w: n = %d is negative", ErrInvalidCost, n)
		}
	} else if err := l.checkCost(n); err != nil {
		return err
	}
	p.n, p.booking = n, Reservation{}
	for i := range p.takes {
		p.takes[i].N, p.owed[i] = n, 0
		if p.op == charge {
			p.takes[i].N = min(n, p.takes[i].Limit.Capacity())
		}
	}
	return nil
}

// record completes the outcome of p, which the store answered: blocks,
// the deny cache, the debts paid.
func (l *Limiter) record(ctx context.Context, p *pass, now time.Time, latency time.Duration) outcome {
	if p.op == reset {
		l.forgetAll(ctx, p) // reset.go
		return outcome{end: decided, latency: latency}
	}
	if p.op == charge || p.op == refund { // the key's waits have changed: ask the store next time
		for _, t := range p.takes {
			if l.denies != nil {
				l.denies.forget(t.Key)
			}
		}
		return outcome{end: decided, latency: latency}
	}
	if l.blockFor > 0 {
		l.applyBlocks(ctx, p) // block.go
	}
	switch {
	case l.denies != nil && l.blockFor > 0:
		l.recordBlocked(p, now)
	case l.denies != nil && p.op == take:
		for i, t := range p.takes {
			l.denies.record(t.Key, t.N, now, p.results[i])
		}
	}
	o := l.summarize(p, outcome{latency: latency})
	if l.debts != nil { // settle noted when the store answered
		if o.res.Allowed {
			for i, t := range p.takes {
				l.debts.paid(t.Key, p.owed[i])
			}
		}
	}
	return o
}

// call asks the store within the time budget: AllowN for one take, AllowAll
// for several, ReserveN for a booking, a charge per take.
func (l *Limiter) call(ctx context.Context, p *pass) error {
	switch p.op {
	case book:
		return l.reserve(ctx, p) // shaping.go
	case charge:
		return l.takeDebts(ctx, p) // charge.go
	case refund:
		return l.giveBack(ctx, p) // settle.go
	case reset:
		return l.resetAll(ctx, p) // reset.go
	}
	if len(p.all) == 1 {
		t := &p.all[0]
		var err error
		p.results[0], err = allowWithin(ctx, l.budget, l.store, t.Key, t.Limit, t.N)
		return err
	}
	return allowAllWithin(ctx, l.budget, l.store, p.all, p.allRes)
}

// checkCost checks a request's cost n against the limiter's policies.
func (l *Limiter) checkCost(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: n = %d is negative", ErrInvalidCost, n)
	}
	if n > l.maxCost {
		return fmt.Errorf("%w: n = %d, capacity %d", ErrCostExceedsCapacity, n, l.maxCost)
	}
	return nil
}

// ended answers a request whose own context ended: a client that went
// away is not served; a request past its own deadline gets the failure
// policy, without blaming the store.
func (l *Limiter) ended(ctx context.Context, p *pass, err error, latency time.Duration) outcome {
	if ctx.Err() == context.Canceled {
		return outcome{end: gone, err: err}
	}
	return l.fallBack(ctx, p, err, latency)
}

// cachedDenial reports whether the deny cache denies a take of p at now,
// and writes the results: the cached denials, and for the other policies a
// full budget, untouched and unknown. The headers so describe the longest
// wait of the policies the cache denies.
func (l *Limiter) cachedDenial(p *pass, now time.Time) bool {
	denied := false
	for i, t := range p.takes {
		if res, ok := l.denies.get(t.Key, t.Limit, t.N, now); ok {
			p.results[i], denied = res, true
		} else {
			p.results[i] = Result{Allowed: true, Limit: t.Limit, Remaining: t.Limit.Capacity()}
		}
	}
	return denied
}

// summarize completes o with p's results: the request passes if all
// allowed, and the headers describe the most constraining.
func (l *Limiter) summarize(p *pass, o outcome) outcome {
	o.end = decided
	o.plan = p.plan
	if l.funcPolicies && l.allNames != nil && (l.headers == HeadersIETF || l.headers == HeadersBoth) {
		o.policyList = l.funcPolicyList(p)
	}
	o.best = mostConstraining(p.results)
	o.res = p.results[o.best]
	for _, r := range p.results {
		if !r.Allowed {
			o.res.Allowed = false
		}
	}
	if o.res.Allowed {
		o.res.RetryAfter = 0
	}
	return o
}

// violated returns the names of the policies that denied p.
func (l *Limiter) violated(p *pass) []string {
	var names []string
	for i, r := range p.results {
		if !r.Allowed {
			if names == nil && i == len(p.results)-1 {
				return l.policies[i].alone
			}
			names = append(names, l.policies[i].name)
		}
	}
	return names
}

// chargeDebts adds to each take what its key owes for the fallback's
// admissions, as much as the take can hold: the store answers for the
// fallback's tokens too, and they are paid once it allows them.
func (l *Limiter) chargeDebts(p *pass) {
	for i := range p.takes {
		t := &p.takes[i]
		if owed := min(l.debts.owed(t.Key), t.Limit.Capacity()-t.N); owed > 0 {
			t.N += owed
			p.owed[i] = owed
		}
	}
}

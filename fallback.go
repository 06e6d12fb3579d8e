package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WithFallback decides on store, a [Local] one such as memory.New(), while
// the limiter's own store fails or its [Breaker] is open, so that an outage
// neither lets every request through nor refuses everyone. It must be
// Local: it answers when the main store did not, with no time budget of
// its own.
//
// With instances app servers sharing the main store, each enforces its
// share of every policy, Envoy's local_cluster_rate_limit idea, rounded
// down so that the fleet's total during an outage stays within the limit
// whatever the requests cost: a token bucket keeps its rate exactly
// (Rate per instances·Period) and holds ⌊capacity / instances⌋ tokens; a
// window admits ⌊Rate / instances⌋ per Period. Where that is less than
// one, each app server holds one token, refilled once per instances/Rate
// periods: the fleet's rate stays within the limit, and at most instances
// requests pass at once. A request that costs more than the share holds is
// denied while the outage lasts, with a Retry-After of the time the whole
// limit takes to refill its cost.
//
// What the fallback admits is owed to the main store, up to the share's
// capacity per key and app server, and charged once the store answers
// again: the next requests take their tokens and the debt in one call, as
// far as their budget holds, and are denied if the store cannot pay both.
// While the store flaps (it answered within the time the limit takes to
// fill), an app server whose share is spent on unpaid tokens denies. A key
// whose store flaps so gets at most the limit's budget and one capacity in
// all from the shares, never the store's budget and the fallbacks' in
// turn; in a longer outage each share decides alone, and the store is then
// charged at most one capacity in all. The failure is still told to the
// error handler.
//
// A limiter on a store that is not Local has a fallback by default: an
// in-process store of its own, with the instances of [WithInstances] (1
// without). [WithFailOpen] and [WithFailClosed] turn that default off; with
// WithFallback they say what happens if the fallback fails too (it fails
// open without them).
func WithFallback(store Store, instances int) Option {
	return func(c *config) error {
		if store == nil {
			return errors.New("ratelimit: WithFallback(nil, ...)")
		}
		if !isLocal(store) {
			return errors.New("ratelimit: WithFallback: the fallback store must be Local (in-process), such as memory.New()")
		}
		if instances < 1 {
			return fmt.Errorf("ratelimit: WithFallback: %d instances, want at least 1", instances)
		}
		if c.instances != 0 && c.instances != instances {
			return fmt.Errorf("ratelimit: WithFallback(..., %d) and WithInstances(%d) disagree", instances, c.instances)
		}
		c.fallback, c.instances = store, instances
		return nil
	}
}

// WithInstances is the number of app servers that share the limiter's
// store, so that its fallback (the default one, or [WithFallback]'s)
// gives each its share of every policy while the store fails: the limit
// divided by instances, as WithFallback says. The default is 1: each app
// server enforces the whole limit on its own during an outage, so that the
// fleet admits up to instances times the limit. It is an error with
// [WithFailOpen] or [WithFailClosed] and no WithFallback, or on a [Local]
// store, where there is no fallback to size.
func WithInstances(instances int) Option {
	return func(c *config) error {
		if instances < 1 {
			return fmt.Errorf("ratelimit: WithInstances(%d): want at least 1", instances)
		}
		if c.instances != 0 && c.instances != instances {
			return fmt.Errorf("ratelimit: WithInstances(%d) and WithFallback(..., %d) disagree", instances, c.instances)
		}
		c.instances = instances
		return nil
	}
}

// defaultFallback gives c the fallback of a limiter on a store that is
// not Local when no option chose a failure policy: a local store of its
// own, limit/instances per app server. now is the limiter's clock.
func (c *config) defaultFallback(local bool, now func() time.Time) error {
	switch {
	case c.fallback != nil:
		return nil
	case c.instances != 0 && local:
		return errors.New("ratelimit: New: WithInstances on a Local store, which needs no fallback")
	case c.instances != 0 && (c.failOpen || c.failClosed):
		return errors.New("ratelimit: New: WithInstances sizes the fallback, which WithFailOpen or WithFailClosed turns off")
	case local || c.failOpen || c.failClosed:
		return nil
	}
	c.fallback, c.instances = newLocalStore(defaultDenyCacheKeys, now), max(c.instances, 1)
	return nil
}

// fallBack answers the takes of p, which the store did not decide because
// of err: by the fallback store if there is one, else with err for the
// failure policy.
func (l *Limiter) fallBack(ctx context.Context, p *pass, err error, latency time.Duration) *outcome {
	switch p.op {
	case charge: // kept here, for the store once it answers (charge.go)
		l.owe(ctx, p)
		return p.answer(outcome{end: undecided, err: err, source: FromFailurePolicy, latency: latency})
	case refund, reset: // the cost stays taken, the key as it was: the safe side of the limit
		return p.answer(outcome{end: undecided, err: err, source: FromFailurePolicy, latency: latency})
	}
	if p.op == take && l.denies != nil && l.heldDenial(p, l.now()) { // pass_guard.go
		// A denial this server saw holds, a block's too, before any
		// failure policy: the store it came from is what would lift it.
		o := p.answer(outcome{source: FromDenyCache, err: err, latency: latency})
		l.summarize(p, o)
		return o
	}
	if l.fallback == nil {
		return p.answer(outcome{end: undecided, err: err, source: FromFailurePolicy, latency: latency})
	}
	// The takes the store did not count: all of them, but for CountTakes
	// (op each), whose takes before p.done the store counted already.
	from := 0
	if p.op == each {
		from = p.done
	}
	takes, shared, results := p.takes[from:], p.shared[from:], p.results[from:]
	for i, t := range takes {
		shared[i] = Take{Key: t.Key, Limit: share(t.Limit, l.instances), N: p.cost(from + i)}
	}
	var ferr error
	if i, ok := l.beyondShare(shared); ok {
		// No share holds the cost, or while the store flaps this server's
		// share is spent on tokens the store is not yet charged for: deny,
		// and say when the whole limit would have refilled the cost, and
		// the budget, taken as empty. The other takes are not decided: a
		// full budget, untouched and unknown, as the deny cache says.
		for j, t := range takes {
			results[j] = Result{Allowed: true, Limit: t.Limit, Remaining: t.Limit.Capacity()}
		}
		t := takes[i]
		retry := max(t.Limit.refillTime(p.cost(from+i), roundUp), time.Second)
		results[i] = Result{Limit: t.Limit, RetryAfter: retry, ResetAfter: max(t.Limit.refillTime(t.Limit.Capacity(), roundUp), retry)}
	} else if len(shared) == 1 {
		t := shared[0]
		results[0], ferr = l.fallback.AllowN(ctx, t.Key, t.Limit, t.N)
	} else {
		ferr = AllowAll(ctx, l.fallback, shared, results)
	}
	if ferr != nil {
		return p.answer(outcome{end: undecided, err: errors.Join(err, ferr), source: FromFailurePolicy, latency: latency})
	}
	admitted := true
	for i := range results {
		results[i].Limit = takes[i].Limit // the headers describe the policy, not the share
		admitted = admitted && results[i].Allowed
	}
	o := p.answer(outcome{source: FromFallback, err: err, latency: latency})
	l.summarize(p, o)
	if l.debts != nil && admitted { // the fallback took its takes: the store is charged once it answers
		for _, t := range shared {
			l.debts.add(t.Key, t.N, t.Limit.Capacity())
		}
	}
	return o
}

// beyondShare returns the first of the shared takes that its share cannot
// hold: a cost above the share's capacity, or, while the store answered
// within the time the limit takes to fill (it flaps), above what the key's
// unpaid debt (debt.go) leaves of the share, so that the fleet's unpaid
// admissions stay within one capacity in all. After a longer outage the
// store's budget has refilled whatever was taken, and the share alone
// decides.
func (l *Limiter) beyondShare(shared []Take) (int, bool) {
	var flapping bool
	if l.debts != nil {
		last := l.lastAnswer.Load()
		flapping = last != 0 && l.now().UnixNano()-last < int64(shared[0].Limit.fillTime())
	}
	for i, t := range shared {
		owed := 0
		if flapping {
			owed = l.debts.owed(t.Key)
		}
		if t.N+owed > t.Limit.Capacity() {
			return i, true
		}
	}
	return 0, false
}

// share is limit divided between instances app servers, rounded down (see
// WithFallback): the fleet's total never exceeds the limit's rate.
func share(limit Limit, instances int) Limit {
	if instances <= 1 {
		return limit
	}
	if limit.Algorithm == TokenBucket && limit.Period <= MaxPeriod/time.Duration(instances) {
		limit.Burst = max(limit.Capacity()/instances, 1)
		limit.Period *= time.Duration(instances) // Rate per instances·Period: exact
		return limit
	}
	if limit.Calendar != NoCalendar { // its windows are the calendar's: at least one per window
		limit.Rate = max(limit.Rate/instances, 1)
		return limit
	}
	if limit.Rate >= instances {
		limit.Rate /= instances
		if limit.Burst > 0 {
			limit.Burst = max(limit.Burst/instances, 1)
		}
		return limit
	}
	stretch := time.Duration(ceilDiv(instances, limit.Rate))
	limit.Rate, limit.Burst = 1, 0
	limit.Period = min(limit.Period, MaxPeriod/stretch) * stretch
	return limit
}

// cost is the cost of p's take i without its debts: the request's, or
// the take's own (takes.go).
func (p *pass) cost(i int) int {
	if p.own {
		return p.takes[i].N - p.owed[i]
	}
	return p.n
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

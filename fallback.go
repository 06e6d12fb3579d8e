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
// limit takes to refill its cost. The failure is still told to the error
// handler. Without a fallback the limiter fails open, or closed with
// [WithFailClosed].
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
		c.fallback, c.instances = store, instances
		return nil
	}
}

// fallBack answers the takes of p, which the store did not decide because
// of err: by the fallback store if there is one, else with err for the
// failure policy.
func (l *Limiter) fallBack(ctx context.Context, p *pass, err error, latency time.Duration) outcome {
	if l.fallback == nil {
		return outcome{end: undecided, err: err, source: FromFailurePolicy, latency: latency}
	}
	for i, t := range p.takes {
		p.shared[i] = Take{Key: t.Key, Limit: share(t.Limit, l.instances), N: t.N}
	}
	var ferr error
	if i, ok := tooCostly(p.shared); ok {
		// No share holds the cost: deny, and say when the whole limit
		// would have refilled it.
		for j, t := range p.takes {
			p.results[j] = Result{Allowed: true, Limit: t.Limit}
		}
		t := p.takes[i]
		p.results[i] = Result{Limit: t.Limit, RetryAfter: max(t.Limit.refillTime(t.N, roundUp), time.Second)}
	} else if len(p.shared) == 1 {
		t := p.shared[0]
		p.results[0], ferr = l.fallback.AllowN(ctx, t.Key, t.Limit, t.N)
	} else {
		ferr = AllowAll(ctx, l.fallback, p.shared, p.results)
	}
	if ferr != nil {
		return outcome{end: undecided, err: errors.Join(err, ferr), source: FromFailurePolicy, latency: latency}
	}
	for i := range p.results {
		p.results[i].Limit = p.takes[i].Limit // the headers describe the policy, not the share
	}
	return l.summarize(p, outcome{source: FromFallback, err: err, latency: latency})
}

// tooCostly returns the first take whose cost its limit cannot hold.
func tooCostly(takes []Take) (int, bool) {
	for i, t := range takes {
		if t.N > t.Limit.Capacity() {
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

func ceilDiv(a, b int) int { return (a + b - 1) / b }

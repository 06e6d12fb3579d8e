package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// takeAll decides the takes of one request as one, as take does for one:
// deny cache, breaker, store within the time budget, fallback.
func (l *Limiter) takeAll(ctx context.Context, takes []Take) decision {
	results := make([]Result, len(takes))
	var now time.Time
	if l.denies != nil || l.breaker != nil {
		now = l.now()
	}
	if l.denies != nil {
		for i, t := range takes {
			if res, ok := l.denies.get(t.Key, t.Limit, t.N, now); ok {
				// This policy alone denies: so does the request. The
				// others' budgets are unknown, and untouched.
				for j, u := range takes {
					results[j] = Result{Allowed: true, Limit: u.Limit, Remaining: u.Limit.Capacity()}
				}
				results[i] = res
				return l.summarize(results, decision{source: FromDenyCache})
			}
		}
	}
	probe := false
	if l.breaker != nil {
		var ok bool
		if ok, probe = l.breaker.allow(now); !ok {
			return l.fallBackAll(ctx, takes, results, ErrBreakerOpen)
		}
	}
	var start time.Time
	if l.observer.Decision != nil {
		start = time.Now()
	}
	err := allowAllWithin(ctx, l.timeout, l.store, takes, results)
	var latency time.Duration
	if l.observer.Decision != nil {
		latency = time.Since(start)
	}
	switch l.settle(ctx, err, probe) {
	case answered:
		if err != nil {
			return decision{err: err, latency: latency}
		}
		if l.denies != nil {
			for i, t := range takes {
				l.denies.record(t.Key, t.N, now, results[i])
			}
		}
		return l.summarize(results, decision{latency: latency})
	case clientGone:
		return decision{err: err, gone: true}
	}
	d := l.fallBackAll(ctx, takes, results, err)
	d.latency = latency
	return d
}

// fallBackAll is fallBack for several takes.
func (l *Limiter) fallBackAll(ctx context.Context, takes []Take, results []Result, err error) decision {
	if l.fallback == nil {
		return decision{err: err, source: FromPolicy}
	}
	shared := make([]Take, len(takes))
	for i, t := range takes {
		shared[i] = Take{Key: t.Key, Limit: share(t.Limit, l.instances, t.N), N: t.N}
	}
	if ferr := AllowAll(ctx, l.fallback, shared, results); ferr != nil {
		return decision{err: errors.Join(err, ferr), source: FromPolicy}
	}
	for i := range results {
		results[i].Limit = takes[i].Limit // the headers describe the policy, not the share
	}
	return l.summarize(results, decision{source: FromFallback, failed: err})
}

// summarize completes d with the policies' results: the request passes if
// all allowed, and the headers describe the most constraining.
func (l *Limiter) summarize(results []Result, d decision) decision {
	d.results = results
	d.best = mostConstraining(results)
	d.res = results[d.best]
	for _, r := range results {
		if !r.Allowed {
			d.res.Allowed = false
		}
	}
	if d.res.Allowed {
		d.res.RetryAfter = 0
	}
	return d
}

// observeAll tells the observer of each policy's part in d: allowed when
// the request passed, denied (or would deny) for the policies that denied
// it, nothing for those that had room in a denied request.
func (l *Limiter) observeAll(r *http.Request, takes []Take, d decision) {
	if d.gone {
		return
	}
	if d.err != nil {
		l.observe(r, takes[0].Key, d)
		return
	}
	for i, res := range d.results {
		if !d.res.Allowed && res.Allowed {
			continue
		}
		p := l.policyAt(i)
		pd := d
		pd.res = res
		l.observePolicy(r, p, takes[i].Key, pd)
	}
}

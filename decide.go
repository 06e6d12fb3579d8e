package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"
)

// decision is the outcome of one request's pass through the limiter.
type decision struct {
	res    Result
	err    error
	gone   bool  // the client went away: neither served nor reported
	failed error // the store's failure that the fallback store covered

	// With several policies: each one's result, and the index of the one
	// the headers describe (res is a copy of it, Allowed for all).
	results []Result
	best    int
	source  Source
	latency time.Duration // of the store call; 0 if there was none
}

// decide keys r and takes its tokens: from the deny cache if it holds a
// denial that applies, else from the store within the time budget unless
// the breaker is open, else from the fallback store. It tells the observer.
func (l *Limiter) decide(r *http.Request, keyFunc KeyFunc) decision {
	if len(l.extra) > 0 {
		return l.decideAll(r, keyFunc)
	}
	key, err := requestKey(keyFunc, r)
	if err != nil {
		return decision{err: err}
	}
	if _, key, err = l.keys.storeKey(key, l.keyParts); err != nil {
		return decision{err: err}
	}
	n := 1
	if l.cost != nil {
		n = l.cost(r)
	}
	d := l.take(r.Context(), key, n)
	if l.observer.Decision != nil {
		l.observe(r, key, d)
	}
	return d
}

// requestKey runs f on r: its key, or its error marked as the KeyFunc's
// (an empty key is a missing one).
func requestKey(f KeyFunc, r *http.Request) (string, error) {
	key, err := f(r)
	if err == nil && key == "" {
		err = &MissingKeyError{What: "key", Status: http.StatusBadRequest}
	}
	if err != nil {
		return "", &keyError{err}
	}
	return key, nil
}

// take decides on n tokens of key: deny cache, breaker, store, fallback.
func (l *Limiter) take(ctx context.Context, key string, n int) decision {
	var now time.Time
	if l.denies != nil || l.breaker != nil {
		now = l.now()
		if l.denies != nil {
			if res, ok := l.denies.get(key, l.limit, n, now); ok {
				return decision{res: res, source: FromDenyCache}
			}
		}
	}
	probe := false
	if l.breaker != nil {
		var ok bool
		if ok, probe = l.breaker.allow(now); !ok {
			return l.fallBack(ctx, key, n, ErrBreakerOpen)
		}
	}
	var start time.Time
	if l.observer.Decision != nil {
		start = time.Now()
	}
	res, err := allowWithin(ctx, l.timeout, l.store, key, l.limit, n)
	d := decision{res: res, err: err}
	if l.observer.Decision != nil {
		d.latency = time.Since(start)
	}
	switch l.settle(ctx, err, probe) {
	case answered:
		if err == nil && l.denies != nil {
			l.denies.record(key, n, now, res)
		}
		return d
	case clientGone:
		d.gone = true
		return d
	}
	fb := l.fallBack(ctx, key, n, err)
	fb.latency = d.latency
	return fb
}

// fallBack answers a request the store did not decide because of err: by
// the fallback store if there is one, else with err for the failure policy.
func (l *Limiter) fallBack(ctx context.Context, key string, n int, err error) decision {
	if l.fallback == nil {
		return decision{err: err, source: FromPolicy}
	}
	res, ferr := l.fallback.AllowN(ctx, key, share(l.limit, l.instances, n), n)
	if ferr != nil {
		return decision{err: errors.Join(err, ferr), source: FromPolicy}
	}
	res.Limit = l.limit // the headers describe the policy, not the share
	return decision{res: res, source: FromFallback, failed: err}
}

// isCallError reports an error of the call's arguments rather than of the
// store.
func isCallError(err error) bool {
	return errors.Is(err, ErrInvalidCost) || errors.Is(err, ErrCostExceedsCapacity) ||
		errors.Is(err, ErrInvalidLimit) || errors.Is(err, ErrEmptyKey)
}

// keyParts returns the client part of request key raw in the store, and
// its store key under the limiter's own policy: namespaced and hashed as
// keyspace.go describes.
func (l *Limiter) keyParts(raw string) (client, full string, err error) {
	if client, err = l.space.client(raw); err != nil {
		return "", "", err
	}
	return client, l.prefix + client, nil
}

// observe tells the observer of d.
func (l *Limiter) observe(r *http.Request, key string, d decision) {
	l.observePolicy(r, &l.first, key, d)
}

// observePolicy tells the observer of d, the decision of policy p.
func (l *Limiter) observePolicy(r *http.Request, p *policy, key string, d decision) {
	if d.gone {
		return // a KeyFunc's error never gets here: decide returns first
	}
	o := Decision{
		Limiter:   l.policy,
		Policy:    p.name,
		Source:    d.source,
		Limit:     p.limit,
		Remaining: d.res.Remaining,
		Latency:   d.latency,
		Err:       cmp.Or(d.err, d.failed),
		Request:   r,
	}
	switch {
	case d.err != nil:
		o.Outcome = Errored
	case d.res.Allowed:
		o.Outcome = Allowed
	case l.dryRun:
		o.Outcome = DryRunDenied
	default:
		o.Outcome = Denied
	}
	if l.observer.Keys {
		o.Key = key
	}
	l.observer.Decision(o)
}

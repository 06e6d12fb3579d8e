package ratelimit

import (
	"errors"
	"net/http"
	"time"
)

// Outcome is what a limiter decided for a request.
type Outcome int

const (
	// OutcomeAllowed: the request took its tokens and was served.
	OutcomeAllowed Outcome = iota
	// OutcomeDenied: the request was over its budget and was refused.
	OutcomeDenied
	// OutcomeDryRunDenied: the request was over its budget, and served anyway
	// because the limiter runs in dry-run mode ([WithDryRun]).
	OutcomeDryRunDenied
	// OutcomeErrored: no store decided (it failed, timed out or its breaker was
	// open); the failure policy answered.
	OutcomeErrored
)

var outcomeNames = [...]string{"allowed", "denied", "dry_run_denied", "error"}

// String returns "allowed", "denied", "dry_run_denied" or "error", the
// values of the result label of package metrics/prometheus.
func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return "unknown"
	}
	return outcomeNames[o]
}

// Source says where a decision came from.
type Source int

const (
	// FromStore: the limiter's store decided.
	FromStore Source = iota
	// FromDenyCache: the limiter's local deny cache ([WithDenyCache])
	// repeated a denial of the store.
	FromDenyCache
	// FromFallback: the fallback store ([WithFallback]) decided while the
	// store failed.
	FromFallback
	// FromFailurePolicy: nothing decided; the failure policy (fail open or
	// closed) answered.
	FromFailurePolicy
)

var sourceNames = [...]string{"store", "deny_cache", "fallback", "failure_policy"}

// String returns "store", "deny_cache", "fallback" or "failure_policy", the
// values of the source label of package metrics/prometheus.
func (s Source) String() string {
	if s < 0 || int(s) >= len(sourceNames) {
		return "unknown"
	}
	return sourceNames[s]
}

// Decision describes one decision of a limiter to an [Observer]. It never
// holds the request's key unless the observer asks for it ([Observer].Keys):
// keys are personal data (addresses, API keys) of unbounded cardinality.
type Decision struct {
	Limiter   string        // the limiter's name ([WithName]), "default" without one
	Policy    string        // the limit's policy name, as in the IETF headers
	Plan      string        // the plan of a policy with plans ([Plan]), else ""; Policy is then "policy.plan"
	Outcome   Outcome       // allowed, denied, would deny (dry run), error
	Source    Source        // who decided
	Limit     Limit         // the limit decided under
	Remaining int           // Result.Remaining; 0 on an error
	Latency   time.Duration // time spent in the store call, 0 if there was none
	Delay     time.Duration // how long the request waits for its tokens: shaping ([WithMaxDelay]) or [Limiter.WaitN]; else 0
	Err       error         // the store's error, for OutcomeErrored
	Key       string        // the key, only with Observer.Keys
	Request   *http.Request // the request decided on, nil for [Limiter.AllowN]; do not keep it
	// First is true for the first Decision told of a request, false for
	// those of its other policies: count requests, store calls and their
	// latency on First, and policies on every Decision.
	First bool
}

// Observer is told of what a limiter does, through optional functions: a
// nil field costs nothing, after net/http/httptrace.ClientTrace. The
// functions are called on the request's goroutine and must be quick and
// safe for concurrent use; one that blocks blocks the request, and one
// that panics panics it, as a handler would (net/http then drops the
// connection). Package metrics/prometheus turns them into metrics.
type Observer struct {
	// Decision is called once per decided request: allowed, denied, would
	// deny, or Errored, from the failure policy: the store failed, or the
	// request's cost or configuration was bad, such as a plan the policies
	// lack (answered 500, the store not asked, no Key). Skipped requests,
	// requests without a key (answered 4xx) and requests whose own
	// context ended before the store answered (their client gone, or
	// their own deadline passed: answered 503) are not decisions.
	Decision func(Decision)
	// BreakerChange is called when the limiter's [Breaker] changes state,
	// while the breaker holds its lock: it must not call the breaker.
	BreakerChange func(limiter string, state BreakerState)
	// Keys puts the key of each request in Decision.Key. Off by default.
	Keys bool
}

// WithObserver sets the observer told of every decision; see [Observer].
// Without one, observing costs nothing.
func WithObserver(o Observer) Option {
	return func(c *config) error {
		if o.Decision == nil && o.BreakerChange == nil {
			return errors.New("ratelimit: WithObserver: no function set")
		}
		c.observer = o
		return nil
	}
}

// WithDryRun makes the limiter decide and report every request (to the
// observer, the metrics and the headers) but serve those over their limit
// anyway, logging them as would-deny at most once a second: a way to watch
// a new limit before it refuses anyone. Retry-After is not written, since
// the request is served. On an in-flight limit, a request that finds every
// slot held runs without one.
func WithDryRun() Option {
	return func(c *config) error { c.dryRun = true; return nil }
}

// observe tells the observer of o, the outcome of p: once, as an error of
// the first policy, when nothing decided; else once per policy that
// allowed the request or denied it (none for the policies that had room in
// a denied request).
func (l *Limiter) observe(r *http.Request, p *pass, o *outcome) {
	switch o.end {
	case badKey, gone:
		return
	case undecided, badCost:
		l.observePolicy(r, 0, p.takes[0].Key, Result{}, o, true)
		return
	}
	first := true
	for i, res := range p.results {
		if !o.res.Allowed && res.Allowed {
			continue
		}
		l.observePolicy(r, i, p.takes[i].Key, res, o, first)
		first = false
	}
}

// observePolicy tells the observer of policy i's part in o.
func (l *Limiter) observePolicy(r *http.Request, i int, key string, res Result, o *outcome, first bool) {
	pol := &l.policies[i]
	d := Decision{
		Limiter:   l.name,
		Policy:    pol.name,
		Source:    o.source,
		Limit:     pol.limit,
		Remaining: res.Remaining,
		Latency:   o.latency,
		Delay:     o.delay,
		Err:       o.err,
		Request:   r,
		First:     first,
	}
	switch {
	case o.end == undecided || o.end == badCost:
		d.Outcome = OutcomeErrored
	case res.Allowed:
		d.Outcome = OutcomeAllowed
	case l.dryRun:
		d.Outcome = OutcomeDryRunDenied
	default:
		d.Outcome = OutcomeDenied
	}
	if pol.limitFunc != nil && res.Limit != (Limit{}) {
		d.Limit = res.Limit // the policy label stays the policy's
	}
	if pl := pol.planned(res.Limit, o.plan); pl != nil {
		d.Policy, d.Plan, d.Limit = pl.full, pl.name, pl.limit // "api.pro", "pro"
	}
	if l.observer.Keys {
		d.Key = key
	}
	l.observer.Decision(d)
}

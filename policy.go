package ratelimit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Policy is one more named limit of a [Limiter], beside the one given to
// [New]: "1,000 per hour" over "10 per second", or a per-address ceiling
// over a per-API-key limit. A request passes only if every policy allows
// it, and a denied request takes nothing from any of them (atomically on a
// [MultiStore]; see [AllowAll] for other stores).
type Policy struct {
	// Name names the policy in headers, metrics and the problem+json body:
	// 1 to 64 letters, digits, '.', '_' or '-', unique within the limiter.
	Name string
	// Limit is the policy's budget.
	Limit Limit
	// Key keys the policy's budget; nil means the limiter's KeyFunc, so
	// that every policy counts the same client.
	Key KeyFunc
}

// WithPolicy adds a policy to the limiter; see [Policy]. The limit given
// to New is the first policy, named after the limiter. A request's budgets
// of all policies are decided in one call to a [MultiStore] (one round
// trip to Redis; on Redis Cluster when their keys share a slot, which the
// policies keyed by the limiter's KeyFunc always do).
//
//	ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
//		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(1000)}))
func WithPolicy(p Policy) Option {
	return func(l *Limiter) error {
		if !validName(p.Name) {
			return fmt.Errorf("ratelimit: WithPolicy(%q): want a name of 1 to 64 letters, digits, '.', '_' or '-'", p.Name)
		}
		if err := p.Limit.Validate(); err != nil {
			return fmt.Errorf("ratelimit: WithPolicy(%q): %w", p.Name, err)
		}
		for _, q := range l.extra {
			if q.name == p.Name {
				return fmt.Errorf("ratelimit: WithPolicy(%q): two policies of that name", p.Name)
			}
		}
		l.extra = append(l.extra, policy{name: p.Name, limit: p.Limit, key: p.Key})
		return nil
	}
}

// policy is one limit of a limiter, ready to decide.
type policy struct {
	name   string
	limit  Limit
	key    KeyFunc // nil: the limiter's
	prefix string  // its keys' namespace in the store
	values headerValues
}

// setUpPolicies checks the extra policies' names against the limiter's
// and makes their namespaces, "name#policy/": names hold no '#' or '/', so
// no two policies' or limiters' namespaces overlap.
func (l *Limiter) setUpPolicies() error {
	for i := range l.extra {
		p := &l.extra[i]
		if p.name == l.policy {
			return fmt.Errorf("ratelimit: WithPolicy(%q): the limiter's own policy has that name", p.name)
		}
		p.prefix = l.space.ns + "#" + p.name + "/"
		p.values = newHeaderValues(p.name, p.limit)
	}
	if len(l.extra) > 0 {
		all := []string{l.values.policy[0]}
		for _, p := range l.extra {
			all = append(all, p.values.policy[0])
		}
		l.allPolicies = []string{strings.Join(all, ", ")}
	}
	return nil
}

// decideAll keys r under every policy and decides them as one.
func (l *Limiter) decideAll(r *http.Request, keyFunc KeyFunc) decision {
	own, err := requestKey(keyFunc, r)
	if err != nil {
		return decision{err: err}
	}
	n := 1
	if l.cost != nil {
		n = l.cost(r)
	}
	takes := make([]Take, 1+len(l.extra))
	for i := range takes {
		p, key := l.policyAt(i), own
		if p.key != nil {
			if key, err = requestKey(p.key, r); err != nil {
				return decision{err: err}
			}
		}
		client, _, err := l.keys.storeKey(key, l.keyParts)
		if err != nil {
			return decision{err: err}
		}
		takes[i] = Take{Key: p.prefix + client, Limit: p.limit, N: n}
	}
	d := l.takeAll(r.Context(), takes)
	if l.observer.Decision != nil {
		l.observeAll(r, takes, d)
	}
	return d
}

// policyAt returns the limiter's i-th policy, 0 being New's.
func (l *Limiter) policyAt(i int) *policy {
	if i == 0 {
		return &l.first
	}
	return &l.extra[i-1]
}

// mostConstraining returns the index of the result the headers describe:
// of the denials, the one with the longest wait; if none, the one with the
// fewest requests left (the closest to exhaustion), the later reset on a tie.
func mostConstraining(results []Result) int {
	best := 0
	for i, r := range results[1:] {
		i++
		b := results[best]
		switch {
		case !r.Allowed && b.Allowed,
			!r.Allowed && !b.Allowed && r.RetryAfter > b.RetryAfter,
			r.Allowed && b.Allowed && (r.Remaining < b.Remaining || r.Remaining == b.Remaining && r.ResetAfter > b.ResetAfter):
			best = i
		}
	}
	return best
}

// writeHeaders sets the rate-limit headers of d on h: those of the most
// constraining policy, and RateLimit-Policy listing them all.
func (l *Limiter) writeHeaders(h http.Header, d decision, retry bool) {
	if d.results == nil {
		l.values.writeHeaders(h, l.headers, d.res, retry)
		return
	}
	l.policyAt(d.best).values.writeHeaders(h, l.headers, d.res, retry)
	if l.headers == HeadersIETF || l.headers == HeadersBoth {
		h[HeaderPolicy] = l.allPolicies
	}
}

// violated returns the names of the policies that denied d.
func (l *Limiter) violated(d decision) []string {
	var names []string
	for i, r := range d.results {
		if !r.Allowed {
			names = append(names, l.policyAt(i).name)
		}
	}
	return names
}

type violatedKey struct{}

func withViolated(r *http.Request, names []string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), violatedKey{}, names))
}

// ViolatedPolicies returns, in a deny handler ([WithDenyHandler]) of a
// limiter with several policies ([WithPolicy]), the names of those that
// denied the request; nil for a limiter of one policy, whose name is the
// limiter's.
func ViolatedPolicies(r *http.Request) []string {
	names, _ := r.Context().Value(violatedKey{}).([]string)
	return names
}

// String describes the limiter's policies, such as
// "api: 60 per 1m; per-ip: 120 per 1m", and dry run.
func (l *Limiter) String() string {
	var b strings.Builder
	for i := range 1 + len(l.extra) {
		p := l.policyAt(i)
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.name + ": " + p.limit.String())
	}
	if l.dryRun {
		b.WriteString(" (dry run)")
	}
	return b.String()
}

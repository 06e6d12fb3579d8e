package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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
	// Plans, if set, are the policy's limits, one per plan, in place of
	// Limit (which must then be zero): a request is decided under the plan
	// its context names ([ContextWithPlan]); see [Plan].
	Plans []Plan
	// LimitFunc, if set, returns the policy's limit per request, for limits
	// that live in a database, such as a customer's contract (Limit and
	// Plans must then be zero). It is called on every request with the
	// request's context (or AllowN's), and should answer from memory (a
	// cache the app keeps fresh). The limit is checked like any other; an
	// invalid one, or an error, is the request's error (answered 500, told
	// to the error handler), never a silent default. Headers describe the
	// limit returned, and RateLimit-Policy lists every policy with the
	// limits of the request; metrics label by the policy only. A key keeps
	// one budget when its limit changes, so every limit it returns must be
	// of the policy's Algorithm (and, for a sliding log, which keeps only
	// its period's requests, should keep one Period: see [Plan]). The
	// header values of many distinct limits
	// are kept, so that they cost a request no more than a few.
	LimitFunc func(ctx context.Context) (Limit, error)
	// Algorithm is, with a LimitFunc, the algorithm of every limit it
	// returns: TokenBucket (the zero value) by default. A limit of another
	// is the request's error, since a key keeps one budget across its
	// limits only under one algorithm. Without a LimitFunc it must be
	// zero: a Limit or a Plan names its own.
	Algorithm Algorithm
}

// WithPolicy adds a policy to the limiter; see [Policy]. The limit given
// to New is the first policy, named after the limiter. A request's budgets
// of all policies are decided in one call to a [MultiStore] (one round
// trip to Redis; on Redis Cluster when their keys share a slot, which the
// policies keyed by the limiter's KeyFunc always do). A policy with a Key
// of its own keeps its budgets under other keys, in other slots of a
// Cluster: there the request's policies are decided as [AllowAll] says
// for keys that are not in one slot, a report, then each policy's take,
// which a concurrent request can leave partly taken.
//
//	ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
//		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(1000)}))
func WithPolicy(p Policy) Option {
	return func(c *config) error {
		if !validName(p.Name) {
			return fmt.Errorf("ratelimit: WithPolicy(%q): want a name of 1 to 64 letters, digits, '.', '_' or '-'", p.Name)
		}
		if err := validateAlgorithm(p); err != nil { // limitfunc.go
			return fmt.Errorf("ratelimit: WithPolicy(%q): %w", p.Name, err)
		}
		if p.LimitFunc != nil {
			if p.Limit != (Limit{}) || len(p.Plans) > 0 {
				return fmt.Errorf("ratelimit: WithPolicy(%q): a LimitFunc takes the place of Limit and Plans: leave them zero", p.Name)
			}
		} else if len(p.Plans) > 0 {
			if err := validatePlans(p); err != nil {
				return configError(fmt.Sprintf("ratelimit: WithPolicy(%q): ", p.Name), err)
			}
		} else if err := p.Limit.Validate(); err != nil {
			return configError(fmt.Sprintf("ratelimit: WithPolicy(%q): ", p.Name), err)
		}
		if err := badKeyFuncError(p.Key); err != nil { // keyconfig.go
			return configError(fmt.Sprintf("ratelimit: WithPolicy(%q): ", p.Name), err)
		}
		for _, q := range c.policies {
			if q.Name == p.Name {
				return fmt.Errorf("ratelimit: WithPolicy(%q): two policies of that name", p.Name)
			}
		}
		c.policies = append(c.policies, p)
		return nil
	}
}

// policy is one limit of a limiter, ready to decide.
type policy struct {
	name   string
	limit  Limit
	key    KeyFunc // nil: the limiter's
	prefix string  // its keys' namespace in the store and its '/'
	space  *keyspace
	keys   *keyCache
	values headerValues
	alone  []string  // {name}: the violated policies when it alone denies
	plans  []planned // Policy.Plans; nil without (plans.go)
	// limitFunc is Policy.LimitFunc, and funcValues the header values of
	// the limits it returned (limitfunc.go, funcvalues.go).
	limitFunc  func(context.Context) (Limit, error)
	funcValues *funcValues
	blocks     *keyCache // the store keys of WithBlock's blocks (block.go)
}

// storeKey is the key under which the policy keeps the budget of the
// client key: in the policy's namespace, with its client part hashed as
// keyspace.go describes, so that attacker-chosen headers cannot grow memory
// or Redis keys without bound and secrets never reach the store. Recent
// keys come from a cache, without allocating, but for keys kept as they
// are on a shared store, which are joined to the namespace (see
// keyspace.joined).
func (p *policy) storeKey(key string) (string, error) {
	return p.cachedKey(p.keys, key, p.keyParts)
}

// cachedKey is parts(raw), from cache c when raw was seen recently, but
// for a key kept as it is on a shared store, which is joined on every
// decision (see keyspace.joined).
func (p *policy) cachedKey(c *keyCache, raw string, parts func(string) (string, error)) (string, error) {
	if p.space.joined && p.space.asIs(raw) {
		return parts(raw)
	}
	return c.storeKey(raw, parts)
}

// keyParts returns the store key of request key raw under the policy.
func (p *policy) keyParts(raw string) (string, error) {
	client, err := p.space.client(raw)
	if err != nil {
		return "", err
	}
	return p.prefix + client, nil
}

// setPolicies makes the limiter's policies in the namespace of l.space:
// the first, limit, in ns + "/"; each of extra in "ns#policy/". Names hold
// no '#' or '/', so no two policies' or limiters' namespaces overlap.
func (l *Limiter) setPolicies(limit Limit, extra []Policy) error {
	ns := l.space.ns
	l.policies = make([]policy, 0, 1+len(extra))
	l.policies = append(l.policies, policy{name: l.name, limit: limit, prefix: ns + "/", space: &l.space})
	for _, p := range extra {
		if p.Name == l.name {
			return fmt.Errorf("ratelimit: WithPolicy(%q): the limiter's own policy has that name", p.Name)
		}
		l.policies = append(l.policies, policy{name: p.Name, limit: p.Limit, key: p.Key, prefix: ns + "#" + p.Name + "/", space: &l.space})
	}
	l.maxCost = limit.Capacity()
	all := make([]string, len(l.policies))
	for i := range l.policies {
		p := &l.policies[i]
		p.keys = newKeyCache()
		if i > 0 && extra[i-1].LimitFunc != nil {
			// A placeholder for String and Policies, of the policy's algorithm.
			p.limitFunc, p.limit = extra[i-1].LimitFunc, PerSecond(1).WithAlgorithm(extra[i-1].Algorithm)
			p.funcValues = newFuncValues(p.name)
			l.funcPolicies = true
			if l.funcLists == nil {
				l.funcLists = new([policyListsSize]atomic.Pointer[policyList])
			}
		}
		if i > 0 && len(extra[i-1].Plans) > 0 {
			p.setPlans(extra[i-1].Plans)
			l.hasPlans = true
			for _, pl := range p.plans {
				l.maxCost = min(l.maxCost, pl.limit.Capacity())
			}
		}
		p.values = newHeaderValues(p.name, p.limit)
		p.alone = []string{p.name}
		if p.limitFunc == nil { // its limits are checked by the store, per request
			l.maxCost = min(l.maxCost, p.limit.Capacity())
		}
		all[i] = p.values.policy[0]
	}
	if err := distinctNames(l.policies); err != nil {
		return err
	}
	if len(l.policies) > 1 {
		l.allNames = []string{strings.Join(all, ", ")}
	}
	l.setPlanLists()
	l.setFuncLists() // funcvalues.go
	return nil
}

// mostConstraining returns the index of the result the headers describe:
// of the denials, the one with the longest wait; if none, the one with the
// fewest requests left (the closest to exhaustion), the later reset on a tie.
func mostConstraining(results []Result) int {
	best := 0
	for i := 1; i < len(results); i++ {
		r, b := &results[i], &results[best]
		switch {
		case !r.Allowed && b.Allowed,
			!r.Allowed && !b.Allowed && r.RetryAfter > b.RetryAfter,
			r.Allowed && b.Allowed && (r.Remaining < b.Remaining || r.Remaining == b.Remaining && r.ResetAfter > b.ResetAfter):
			best = i
		}
	}
	return best
}

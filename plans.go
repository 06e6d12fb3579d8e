package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Plan is one named limit of a [Policy] with plans: "free" 60 per minute,
// "pro" 600 per minute. A request is decided under the plan its context
// names ([ContextWithPlan]), so that the app's authentication, which knows the
// customer, chooses the limit, and nothing the client sends does.
//
// A key keeps one budget whatever its plan: on a change of plan the budget
// carries over under the new limit. A fixed window or a calendar quota
// keeps its count, so a customer who spent the free plan's 1,000 of the
// day has 99,000 left on a pro plan of 100,000, at once; under a plan of
// another period the count holds until the window it was counted in ends
// (50 of an hour's 100 spent, a plan of 10 a minute denies until that
// hour ends, and says so), and the new plan's takes are counted with it
// until the later of the two windows' ends (so that switching to a plan
// of a shorter period never sheds a count); a sliding window's counts are
// the new period's current window's; a token bucket
// keeps its tokens (at most the new capacity) and refills at the new rate,
// so an exhausted free key upgraded to pro waits one pro token's refill at
// most. A downgrade never grants more than the new plan's capacity.
//
// The plans of one policy must therefore share one [Algorithm] (a store
// keeps a key's budget under each algorithm apart, and a token bucket's
// tokens are no window's count): [New] refuses a policy whose plans differ
// in algorithm, naming them. Plans of other policies may use any. The
// plans of a [SlidingLog] must share one Period too: a log keeps only the
// requests of its period, so that a request under a plan of a shorter one
// would forget what a longer one still counts, and New refuses them.
type Plan struct {
	// Name names the plan in the context, and as "policy.plan" in
	// RateLimit-Policy and in the metrics' policy label (bounded: plans
	// are configured, never request data), with [Decision.Plan] the plan
	// alone: 1 to 64 letters, digits, '.', '_' or '-', unique within the
	// policy.
	Name string
	// Limit is the plan's budget.
	Limit Limit
}

// errUnknownPlan is wrapped by the error of a request whose context names
// no plan of a policy with plans, or one it does not have: a programming
// error (the request is answered 500 and the error handler told), never a
// silent default. It wraps [ErrBadConfig].
var errUnknownPlan = fmt.Errorf("%w: unknown plan", ErrBadConfig)

type planKey struct{}

// ContextWithPlan returns a copy of ctx that names the plan of its requests, for
// the policies with plans: the app's authentication calls it once it knows
// the customer, r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), "pro")).
func ContextWithPlan(ctx context.Context, plan string) context.Context {
	return context.WithValue(ctx, planKey{}, plan)
}

// PlanFrom returns the plan ctx names ([ContextWithPlan]), or "" if none.
func PlanFrom(ctx context.Context) string {
	s, _ := ctx.Value(planKey{}).(string)
	return s
}

// planned is one plan of a policy, ready to decide.
type planned struct {
	name   string
	full   string   // "policy.plan": its name in headers and metrics
	alone  []string // {full}: the violated policies when it alone denies
	limit  Limit
	values headerValues
}

// validatePlans checks the plans of policy p: at least one, each with a
// good name, once, and a valid limit (plans may share one), all of one
// algorithm (and one period, for a sliding log); and no Limit of its own
// beside them.
func validatePlans(p Policy) error {
	if p.Limit != (Limit{}) {
		return errors.New("a policy with plans takes its limits from them: leave Limit zero")
	}
	for i, pl := range p.Plans {
		if !validName(pl.Name) {
			return fmt.Errorf("plan %q: want a name of 1 to 64 letters, digits, '.', '_' or '-'", pl.Name)
		}
		if err := pl.Limit.Validate(); err != nil {
			return fmt.Errorf("plan %q: %w", pl.Name, err)
		}
		for _, q := range p.Plans[:i] {
			if q.Name == pl.Name {
				return fmt.Errorf("two plans named %q", pl.Name)
			}
		}
		first := p.Plans[0]
		if pl.Limit.Algorithm != first.Limit.Algorithm {
			return fmt.Errorf("plan %q counts with a %v and plan %q with a %v: a key keeps one budget across plans only under one algorithm, so give every plan of a policy the same", first.Name, first.Limit.Algorithm, pl.Name, pl.Limit.Algorithm)
		}
		if pl.Limit.Algorithm == SlidingLog && pl.Limit.Period != first.Limit.Period {
			return fmt.Errorf("plan %q keeps a sliding log of %v and plan %q of %v: a log keeps only its period's requests, so a request under the shorter would forget what the longer still counts; give the plans of a sliding log one period", first.Name, first.Limit.Period, pl.Name, pl.Limit.Period)
		}
	}
	return nil
}

// setPlans readies the plans of policy pol.
func (pol *policy) setPlans(plans []Plan) {
	pol.plans = make([]planned, len(plans))
	for i, pl := range plans {
		full := pol.name + "." + pl.Name
		pol.plans[i] = planned{name: pl.Name, full: full, alone: []string{full}, limit: pl.Limit, values: newHeaderValues(full, pl.Limit)}
	}
	pol.limit = plans[0].Limit // for what needs one limit: String, Policies
}

// limitFor returns the limit of policy pol for a request of ctx, and its
// plan's index (-1 without plans).
func (pol *policy) limitFor(ctx context.Context) (Limit, int, error) {
	if pol.limitFunc != nil {
		return pol.funcLimit(ctx) // limitfunc.go
	}
	if pol.plans == nil {
		return pol.limit, -1, nil
	}
	name := PlanFrom(ctx)
	for i := range pol.plans {
		if pol.plans[i].name == name {
			return pol.plans[i].limit, i, nil
		}
	}
	if name == "" {
		return Limit{}, -1, fmt.Errorf("%w: policy %q has plans and the request's context names none (see ContextWithPlan)", errUnknownPlan, pol.name)
	}
	return Limit{}, -1, fmt.Errorf("%w: policy %q has no plan %s", errUnknownPlan, pol.name, strconv.Quote(name))
}

// planOf returns the name of the first plan of pol whose limit is l, or "".
func (pol *policy) planOf(l Limit) string {
	if p := pol.planned(l, ""); p != nil {
		return p.name
	}
	return ""
}

// planned returns the plan of pol named plan whose limit is l, or without
// one so named the first whose limit is l, or nil: plans may share a
// limit, and the request's plan tells them apart.
func (pol *policy) planned(l Limit, plan string) *planned {
	var first *planned
	for i := range pol.plans {
		pl := &pol.plans[i]
		if pl.limit != l {
			continue
		}
		if pl.name == plan {
			return pl
		}
		if first == nil {
			first = pl
		}
	}
	return first
}

// valuesFor returns the header values of the policy for a result under
// limit l of a request of plan: its plan's, with plans.
func (pol *policy) valuesFor(l Limit, plan string) *headerValues {
	if pol.limitFunc != nil {
		return pol.funcHeaderValues(l)
	}
	if pl := pol.planned(l, plan); pl != nil {
		return &pl.values
	}
	return &pol.values
}

// setPlanLists makes, when a limiter of several policies has plans, the
// RateLimit-Policy value that lists every policy for each plan name.
func (l *Limiter) setPlanLists() {
	if len(l.policies) < 2 {
		return
	}
	for i := range l.policies {
		for _, pl := range l.policies[i].plans {
			if l.planLists == nil {
				l.planLists = make(map[string][]string)
			}
			if _, done := l.planLists[pl.name]; done {
				continue
			}
			list := ""
			for j := range l.policies {
				pol := &l.policies[j]
				v := pol.values.policy[0]
				for _, q := range pol.plans {
					if q.name == pl.name {
						v = q.values.policy[0]
					}
				}
				if j > 0 {
					list += ", "
				}
				list += v
			}
			l.planLists[pl.name] = []string{list}
		}
	}
}

// distinctNames checks that no two of policies go by one name in the
// headers, Decision.ViolatedPolicies and metrics, where a policy's plan is
// "policy.plan": a policy named "plan.pro" beside policy "plan"'s plan
// "pro" could not be told apart there.
func distinctNames(policies []policy) error {
	seen := make(map[string]bool, len(policies))
	for i := range policies {
		p := &policies[i]
		names := []string{p.name}
		for _, pl := range p.plans {
			names = append(names, pl.full)
		}
		for _, name := range names {
			if seen[name] {
				return fmt.Errorf("ratelimit: WithPolicy(%q): two of the limiter's policies and plans go by %q in the headers and metrics", p.name, name)
			}
			seen[name] = true
		}
	}
	return nil
}

package rules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
)

// Plans: a file's top-level plans name sets of limits,
//
//	plans:
//	  free: [{rate: 60, period: 1m}, {rate: 1000, period: day}]
//	  pro:  [{rate: 600, period: 1m}, {rate: 100000, period: day}]
//
// and a rule that says plans: [free, pro] decides each request under the
// limits of the plan its context names (ratelimit.ContextWithPlan). The limits of
// a rule's plans pair by name, else by period ("1m", "day"): each pair is
// one ratelimit.Policy of the rule, with one ratelimit.Plan per plan,
// named as the rule's further limits are ("api-1m", "api-day").

// planDef is a plan of the file as the parser keeps it, for the rules that
// use it.
type planDef struct {
	plan  Plan
	pairs []string // each limit's name, else its period: what it pairs by
	line  int
}

// planDefs are the plans of a file, in its order.
type planDefs []*planDef

func (ds planDefs) find(name string) *planDef {
	for _, d := range ds {
		if d.plan.Name == name {
			return d
		}
	}
	return nil
}

func (ds planDefs) names() string {
	var out []string
	for _, d := range ds {
		out = append(out, d.plan.Name)
	}
	return strings.Join(out, ", ")
}

// filePlans parses the top-level plans, n: a plan name and its limits (a list,
// or one limit), for each plan. A limit's algorithm is alg, the defaults',
// unless it gives one.
func (p *parser) filePlans(n *yaml.Node, alg ratelimit.Algorithm) ([]Plan, error) {
	at := place{field: "plans"}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, at, "want plans, each a name and its limits, such as free: [{rate: 60, period: 1m}]; got %s", describe(n))
	}
	if len(n.Content) == 0 {
		return nil, p.fail(n, at, "no plans")
	}
	var plans []Plan
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || !validName(k.Value) {
			return nil, p.fail(k, at, "plan name %s: want 1 to 64 letters, digits, '.', '_' or '-'", quoted(k))
		}
		if d := p.plans.find(k.Value); d != nil {
			return nil, p.fail(k, at, "plan %q given twice (first on line %d)", k.Value, d.line)
		}
		d, err := p.plan(k.Value, v, alg, at.in(k.Value))
		if err != nil {
			return nil, err
		}
		d.line = k.Line
		p.plans = append(p.plans, d)
		plans = append(plans, d.plan)
	}
	return plans, nil
}

// plan parses the limits of the plan named name.
func (p *parser) plan(name string, n *yaml.Node, alg ratelimit.Algorithm, at place) (*planDef, error) {
	items := []*yaml.Node{n}
	switch {
	case n.Kind == yaml.SequenceNode:
		items = n.Content
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		items = nil
	}
	if len(items) == 0 {
		return nil, p.fail(n, at, "no limits: want a list of {name, rate, period, timezone, burst, algorithm}")
	}
	d := &planDef{plan: Plan{Name: name}}
	for j, item := range items {
		item = deref(item)
		iat := at
		if n.Kind == yaml.SequenceNode {
			iat.field = fmt.Sprintf("%s[%d]", at.field, j+1)
		}
		fields, err := p.fields(item, iat, planLimitFields)
		if err != nil {
			return nil, err
		}
		l, err := p.limit(item, fields, iat, alg)
		if err != nil {
			return nil, err
		}
		pair := l.Name
		if pair == "" {
			pair = periodName(l.Limit)
		}
		for k, other := range d.pairs {
			switch {
			case other != pair:
			case l.Name != "":
				return nil, p.fail(item, iat.in("name"), "%q is taken in this plan (by limit %d)", pair, k+1)
			default:
				return nil, p.fail(item, iat, "a second limit of period %s (after limit %d): name them, so that the plans of a rule can pair them", pair, k+1)
			}
		}
		d.plan.Limits = append(d.plan.Limits, l)
		d.pairs = append(d.pairs, pair)
	}
	return d, nil
}

// periodName names a limit by its period: "1m", "day".
func periodName(l ratelimit.Limit) string {
	if l.Calendar != ratelimit.NoCalendar {
		return l.Calendar.String()
	}
	return formatPeriod(l.Period)
}

// rulePlans sets the plans of rule r, whose limits are named already,
// from its plans field f: the plans it names, each once, their limits
// paired and named as the rule's policies.
func (p *parser) rulePlans(r *Rule, f *pair, at place) error {
	at = at.in("plans")
	names, err := p.list(f.value, at)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return p.fail(f.value, at, "no plans: want a list of the file's plans, such as [free, pro]")
	}
	var defs []*planDef
	for _, name := range names {
		d := p.plans.find(name)
		switch {
		case d == nil && len(p.plans) == 0:
			return p.fail(f.value, at, "unknown plan %q: the file has no plans (a top-level plans: of names and their limits)", name)
		case d == nil:
			return p.fail(f.value, at, "unknown plan %q (plans: %s)", name, p.plans.names())
		}
		for _, e := range defs {
			if e == d {
				return p.fail(f.value, at, "plan %q given twice", name)
			}
		}
		defs = append(defs, d)
	}
	first := defs[0]
	for _, d := range defs[1:] {
		for _, pair := range [][2]*planDef{{first, d}, {d, first}} {
			for _, k := range pair[0].pairs {
				if !contains(pair[1].pairs, k) {
					return p.fail(f.value, at, "plan %q has a limit %q and plan %q none: the plans of a rule pair their limits by name, else by period", pair[0].plan.Name, k, pair[1].plan.Name)
				}
			}
		}
	}
	// Each pair is a policy of the rule: named as given, else as a further
	// limit of the rule is (rule-period, made unique with -2, -3, ...).
	taken := map[string]bool{r.Name: true}
	for _, l := range r.Limits {
		taken[l.Name] = true
	}
	policy := map[string]string{}
	for j, k := range first.pairs {
		name := k
		if first.plan.Limits[j].Name != "" {
			if taken[name] {
				return p.fail(f.value, at, "limit %q of plan %q is taken in this rule", name, first.plan.Name)
			}
		} else {
			base := r.Name + "-" + k
			if len(base) > 60 {
				base = base[:60]
			}
			name = base
			for i := 2; taken[name]; i++ {
				name = base + "-" + strconv.Itoa(i)
			}
		}
		taken[name], policy[k] = true, name
	}
	r.Plans = make([]Plan, len(defs))
	for i, d := range defs {
		r.Plans[i] = Plan{Name: d.plan.Name, Limits: make([]Limit, len(d.plan.Limits))}
		for j, l := range d.plan.Limits {
			l.Name = policy[d.pairs[j]]
			r.Plans[i].Limits[j] = l
		}
	}
	policies, err := r.planPolicies()
	if err != nil {
		return p.fail(f.value, at, "%v", err)
	}
	// The headers and metrics call a plan's limit "policy.plan": no limit
	// of the rule may go by that name (ratelimit.New refuses it too).
	for _, pol := range policies {
		for _, pl := range pol.Plans {
			if full := pol.Name + "." + pl.Name; taken[full] {
				return p.fail(f.value, at, "limit %q of this rule goes by the name the headers give plan %q's limit %q", full, pl.Name, pol.Name)
			}
		}
	}
	return nil
}

// errNoOwnLimit is the error of a rule with plans and no limit of its own.
var errNoOwnLimit = errors.New("a rule with plans needs a limit of its own too (rate and period, or limits), which every plan shares: the rule's limiter's")

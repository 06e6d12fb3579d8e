package rules

import (
	"fmt"
	"strings"

	"github.com/ratelimit-go/ratelimit"
)

// planPolicies returns the policies of r's plans: one per limit name, in
// the first plan's order, with each plan's limit of that name. A name
// every plan gives alike is a policy without plans; otherwise each plan of
// a policy needs a limit of its own, which names the plan in headers and
// metrics.
func (r Rule) planPolicies() ([]ratelimit.Policy, error) {
	if len(r.Plans) == 0 {
		return nil, nil
	}
	first := r.Plans[0]
	for i, pl := range r.Plans {
		if len(pl.Limits) == 0 {
			return nil, fmt.Errorf("plan %q has no limits", pl.Name)
		}
		for _, q := range r.Plans[:i] {
			if q.Name == pl.Name {
				return nil, fmt.Errorf("plan %q given twice", pl.Name)
			}
		}
		for j, l := range pl.Limits {
			switch {
			case l.Name == "":
				return nil, fmt.Errorf("plan %q: limit %d has no name", pl.Name, j+1)
			case l.Key != nil:
				return nil, fmt.Errorf("plan %q: limit %q has a key: a plan's limits take the rule's", pl.Name, l.Name)
			case len(pl.Limits) != len(first.Limits) || !hasLimit(first, l.Name):
				return nil, fmt.Errorf("plan %q has a limit %q and plan %q none", pl.Name, l.Name, first.Name)
			}
			for _, m := range pl.Limits[:j] {
				if m.Name == l.Name {
					return nil, fmt.Errorf("plan %q: two limits named %q", pl.Name, l.Name)
				}
			}
		}
	}
	var out []ratelimit.Policy
	planned := false
	for _, l := range first.Limits {
		lims := make([]ratelimit.Limit, len(r.Plans))
		all := len(r.Plans) > 1 // every plan gives it alike
		for i, pl := range r.Plans {
			lims[i] = limitNamed(pl, l.Name)
			all = all && sameLimit(lims[i], lims[0])
		}
		if all {
			out = append(out, ratelimit.Policy{Name: l.Name, Limit: lims[0]})
			continue
		}
		pol := ratelimit.Policy{Name: l.Name}
		for i, pl := range r.Plans {
			for j := range i {
				if sameLimit(lims[i], lims[j]) {
					return nil, fmt.Errorf("plans %q and %q give limit %q alike (%v): the plans of a limit need limits of their own, or all the same", r.Plans[j].Name, pl.Name, l.Name, lims[i])
				}
			}
			pol.Plans = append(pol.Plans, ratelimit.Plan{Name: pl.Name, Limit: lims[i]})
		}
		out = append(out, pol)
		planned = true
	}
	if !planned && len(r.Plans) > 1 {
		return nil, fmt.Errorf("plans %q and %q give the rule the same limits: make them one plan", first.Name, r.Plans[1].Name)
	}
	return out, nil
}

// describePlans writes the policies of r's plans for Rule.String, such as
// " + api-1m: free 60 per 1m, pro 600 per 1m per ip".
func describePlans(b *strings.Builder, r Rule) {
	key := strings.Join(r.key(), " else ")
	policies, err := r.planPolicies()
	if err != nil {
		var names []string
		for _, pl := range r.Plans {
			names = append(names, pl.Name)
		}
		b.WriteString(" + plans " + strings.Join(names, ", ") + " (" + err.Error() + ")")
		return
	}
	for _, pol := range policies {
		b.WriteString(" + " + pol.Name + ": ")
		if len(pol.Plans) == 0 {
			b.WriteString(pol.Limit.String())
		}
		for i, pl := range pol.Plans {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pl.Name + " " + pl.Limit.String())
		}
		b.WriteString(" per " + key)
	}
}

func hasLimit(pl Plan, name string) bool {
	for _, l := range pl.Limits {
		if l.Name == name {
			return true
		}
	}
	return false
}

func limitNamed(pl Plan, name string) ratelimit.Limit {
	for _, l := range pl.Limits {
		if l.Name == name {
			return l.Limit
		}
	}
	return ratelimit.Limit{}
}

// sameLimit reports whether a and b are one budget: the same rate, period,
// capacity, algorithm, calendar and zone.
func sameLimit(a, b ratelimit.Limit) bool {
	return a.Rate == b.Rate && a.Period == b.Period && a.Capacity() == b.Capacity() &&
		a.Algorithm == b.Algorithm && a.Calendar == b.Calendar && zoneName(a) == zoneName(b)
}

func zoneName(l ratelimit.Limit) string {
	if l.Zone == nil {
		return "UTC"
	}
	return l.Zone.String()
}

package rules

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelimit-go/ratelimit"
)

// Limiter builds the rule's limiter on store, with opts after the rule's
// own options (so they can override them): named after the first limit
// (which is named after the rule unless it has a name of its own), keyed by
// the first limit's key, each further limit a ratelimit.Policy, then the
// policies of its plans (see [Rule.Plans]); Count and Block are
// ratelimit.WithCountIf and ratelimit.WithBlock. A rule keyed by user needs
// [WithUser], which only [NewHandler] takes: Limiter fails on it.
func (c *Config) Limiter(r Rule, store ratelimit.Store, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	return c.keys(nil).limiter(r, store, opts)
}

func (k keys) limiter(r Rule, store ratelimit.Store, opts []ratelimit.Option) (*ratelimit.Limiter, error) {
	limits := r.limits()
	key := r.key()
	own := key
	if limits[0].Key != nil {
		own = limits[0].Key
	}
	kf, err := k.keyFunc(own)
	if err != nil {
		return nil, err
	}
	cost := r.Cost
	name := limits[0].Name
	if name == "" {
		name = r.Name
	}
	all := []ratelimit.Option{
		ratelimit.WithName(name),
		ratelimit.WithKeyFunc(kf),
		ratelimit.WithHeaders(r.Headers),
		ratelimit.WithCost(func(*http.Request) int { return cost }),
	}
	for _, l := range limits[1:] {
		p := ratelimit.Policy{Name: l.Name, Limit: l.Limit}
		if l.Key != nil && !slices.Equal(l.Key, own) || l.Key == nil && !slices.Equal(key, own) {
			pk := key
			if l.Key != nil {
				pk = l.Key
			}
			if p.Key, err = k.keyFunc(pk); err != nil {
				return nil, err
			}
		}
		all = append(all, ratelimit.WithPolicy(p))
	}
	plans, err := r.planPolicies() // plans.go
	if err != nil {
		return nil, err
	}
	for _, p := range plans {
		if !slices.Equal(key, own) { // a plan's limits take the rule's key
			if p.Key, err = k.keyFunc(key); err != nil {
				return nil, err
			}
		}
		all = append(all, ratelimit.WithPolicy(p))
	}
	if err := r.checkResponse(); err != nil { // count.go
		return nil, err
	}
	if len(r.Count) > 0 {
		all = append(all, ratelimit.WithCountIf(ratelimit.CountStatus(r.Count...)))
	}
	if r.Block > 0 {
		all = append(all, ratelimit.WithBlock(r.Block))
	}
	if r.DryRun {
		all = append(all, ratelimit.WithDryRun())
	}
	if addressesOnly(r) {
		// Address and route keys are stored as they are whatever the
		// secret: on a shared store such a rule needs none (a
		// WithKeySecret of WithLimiterOptions, after it, still applies).
		all = append(all, ratelimit.WithPlainKeys())
	}
	if r.FailClosed {
		all = append(all, ratelimit.WithFailClosed())
	}
	if r.Timeout != nil {
		all = append(all, ratelimit.WithTimeout(*r.Timeout))
	}
	if r.ProblemJSON {
		all = append(all, ratelimit.WithDenyHandler(ratelimit.ProblemJSON()))
	}
	if r.DenyCache != nil {
		all = append(all, ratelimit.WithDenyCache(*r.DenyCache))
	}
	if b := r.Breaker; b != nil {
		if b.Off {
			all = append(all, ratelimit.WithBreaker(nil))
		} else {
			all = append(all, ratelimit.WithBreaker(ratelimit.NewBreaker(b.Failures, b.CoolDown)))
		}
	}
	return ratelimit.New(store, limits[0].Limit, append(all, opts...)...)
}

// limiterNames are the names rules hold: each rule's, and its limiter's
// (its first limit's), to the rule that holds it.
type limiterNames map[string]string

// claim takes r's names, or fails if another rule holds one: two rules'
// limiters of one name would share their budgets.
func (m limiterNames) claim(r Rule) error {
	first := r.limits()[0].Name
	for _, name := range []string{r.Name, first} {
		if other, ok := m[name]; ok && other != r.Name {
			return fmt.Errorf("%q names rule %q or its first limit: a rule's limiter needs a name of its own", name, other)
		}
	}
	m[r.Name], m[first] = r.Name, r.Name
	return nil
}

// limits returns the rule's limits; a Rule built by hand may give Limit
// alone.
func (r Rule) limits() []Limit {
	if len(r.Limits) == 0 {
		return []Limit{{Name: r.Name, Limit: r.Limit}}
	}
	return r.Limits
}

func (r Rule) key() []string {
	if len(r.Key) == 0 {
		return []string{"ip"}
	}
	return r.Key
}

// String describes the rule, such as
// "GET /api/ api: 60 per 1m per header:X-API-Key else ip + api-1m: 120 per 1m per ip".
func (r Rule) String() string {
	var b strings.Builder
	b.WriteString(r.Match + " ")
	for i, l := range r.limits() {
		if i > 0 {
			b.WriteString(" + ")
		}
		key := r.key()
		if l.Key != nil {
			key = l.Key
		}
		b.WriteString(l.Name + ": " + l.Limit.String() + " per " + strings.Join(key, " else "))
	}
	if len(r.Plans) > 0 {
		describePlans(&b, r)
	}
	var extra []string
	if r.Cost != 1 {
		extra = append(extra, "cost "+strconv.Itoa(r.Cost))
	}
	if r.DryRun {
		extra = append(extra, "dry run")
	}
	if r.FailClosed {
		extra = append(extra, "fails closed")
	}
	extra = append(extra, r.describeResponse()...)
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}

// addressesOnly reports whether every key of r is made of ip and route
// parts, which hold no secret.
func addressesOnly(r Rule) bool {
	lists := [][]string{r.key()}
	for _, l := range r.limits() {
		lists = append(lists, l.Key)
	}
	for _, alts := range lists {
		for _, alt := range alts {
			for _, part := range strings.Split(alt, "+") {
				if p := strings.TrimSpace(part); p != "ip" && p != "route" {
					return false
				}
			}
		}
	}
	return true
}

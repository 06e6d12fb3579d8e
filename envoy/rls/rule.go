package rls

import (
	"strconv"
	"strings"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/ratelimit-go/ratelimit"
)

// Rule is the limit of one descriptor: the reference's rate_limit, and
// the library's Limit that enforces it.
type Rule struct {
	Name            string                              // rate_limit.name, which replaces names
	Replaces        []string                            // the names of the rules this one replaces
	RequestsPerUnit uint32                              // the budget of one window
	Unit            pb.RateLimitResponse_RateLimit_Unit // the window's unit
	UnitMultiplier  uint32                              // units per window: 1 unless the file says more
	Unlimited       bool                                // never limited
	ShadowMode      bool                                // decided and counted, but never refuses
	QuotaMode       bool                                // over its limit, the descriptor answers OK
	// Limit enforces the rule; the zero Limit when RequestsPerUnit is 0,
	// a rule that refuses every hit.
	Limit ratelimit.Limit
	sig   string // told apart the keys of one descriptor under other units or algorithms
}

// newRule makes the rule of d, which has a rate_limit.
func newRule(file string, d yamlDescriptor) (*Rule, error) {
	y, line := d.RateLimit, d.limitLine
	r := &Rule{
		Name: y.Name, RequestsPerUnit: y.RequestsPerUnit, Unlimited: y.Unlimited,
		ShadowMode: d.ShadowMode, QuotaMode: d.QuotaMode, UnitMultiplier: 1,
	}
	for _, rp := range y.Replaces {
		if rp.Name == "" {
			return nil, configError(file, line, "replaces", "should not have an empty replaces entry")
		}
		if rp.Name == y.Name {
			return nil, configError(file, line, "replaces", "replaces should not contain name of same descriptor")
		}
		r.Replaces = append(r.Replaces, rp.Name)
	}
	v, ok := pb.RateLimitResponse_RateLimit_Unit_value[strings.ToUpper(y.Unit)]
	valid := ok && v != int32(pb.RateLimitResponse_RateLimit_UNKNOWN)
	if r.Unlimited {
		if valid {
			return nil, configError(file, line, "unit", "should not specify rate limit unit when unlimited")
		}
		return r, nil
	}
	if !valid {
		return nil, configError(file, line, "unit", "invalid rate limit unit '%s'", y.Unit)
	}
	r.Unit = pb.RateLimitResponse_RateLimit_Unit(v)
	if y.UnitMultiplier > 1 {
		r.UnitMultiplier = y.UnitMultiplier
	}
	alg, err := algorithm(y.Algorithm)
	if err != nil {
		return nil, configError(file, line, "algorithm", "%v", err)
	}
	if y.Burst != 0 && alg != ratelimit.TokenBucket {
		return nil, configError(file, line, "burst", "burst is for algorithm token_bucket only")
	}
	var zone *time.Location
	if y.Timezone != "" {
		if r.Unit != pb.RateLimitResponse_RateLimit_DAY && r.Unit != pb.RateLimitResponse_RateLimit_MONTH {
			return nil, configError(file, line, "timezone", "a timezone is for units day and month only")
		}
		if alg != ratelimit.FixedWindow || r.UnitMultiplier > 1 {
			return nil, configError(file, line, "timezone", "a timezone needs a fixed window of one unit")
		}
		if zone, err = time.LoadLocation(y.Timezone); err != nil {
			return nil, configError(file, line, "timezone", "%v", err)
		}
	}
	if r.Limit, err = makeLimit(r.RequestsPerUnit, r.Unit, r.UnitMultiplier, alg, y.Burst, zone); err != nil {
		return nil, configError(file, line, "requests_per_unit", "%v", err)
	}
	r.sig = signature(r.Unit, r.UnitMultiplier, r.Limit)
	return r, nil
}

// algorithm returns the Algorithm a file names; none is the reference's
// fixed window.
func algorithm(name string) (ratelimit.Algorithm, error) {
	switch name {
	case "", "fixed_window":
		return ratelimit.FixedWindow, nil
	case "token_bucket":
		return ratelimit.TokenBucket, nil
	case "sliding_window":
		return ratelimit.SlidingWindow, nil
	case "sliding_log":
		return ratelimit.SlidingLog, nil
	}
	return 0, &unknownError{what: "algorithm", name: name, want: "fixed_window, token_bucket, sliding_window or sliding_log"}
}

type unknownError struct{ what, name, want string }

func (e *unknownError) Error() string {
	return "unknown " + e.what + " '" + e.name + "': want " + e.want
}

// makeLimit is the Limit of n requests per mult units under alg: the
// zero Limit for n = 0.
func makeLimit(n uint32, unit pb.RateLimitResponse_RateLimit_Unit, mult uint32, alg ratelimit.Algorithm, burst int, zone *time.Location) (ratelimit.Limit, error) {
	if n == 0 {
		return ratelimit.Limit{}, nil
	}
	if zone != nil {
		if unit == pb.RateLimitResponse_RateLimit_DAY {
			return ratelimit.PerDay(int(n), zone), nil
		}
		return ratelimit.PerMonth(int(n), zone), nil
	}
	period := units[unit]
	if mult > 1 {
		if period > ratelimit.MaxPeriod/time.Duration(mult) {
			return ratelimit.Limit{}, &unknownError{what: "unit_multiplier", name: strconv.Itoa(int(mult)), want: "a window of at most 100 years"}
		}
		period *= time.Duration(mult)
	}
	l := ratelimit.Limit{Rate: int(n), Period: period, Algorithm: alg, Burst: burst}
	return l, l.Validate()
}

// signature tells apart the store keys of a descriptor under its unit,
// multiplier and algorithm, so that a reload that changes them starts a
// new budget, as the reference's keys (which hold the window) do; a new
// requests_per_unit keeps the count.
func signature(unit pb.RateLimitResponse_RateLimit_Unit, mult uint32, l ratelimit.Limit) string {
	s := strconv.Itoa(int(unit))
	if mult > 1 {
		s += "x" + strconv.Itoa(int(mult))
	}
	if l.Algorithm != ratelimit.FixedWindow {
		s += "a" + strconv.Itoa(int(l.Algorithm))
	}
	if l.Zone != nil {
		s += "z" + l.Zone.String()
	}
	return s
}

// overrideRule is the rule of a request's limit override, as the reference
// makes it: no shadow mode, no name; nil for an unknown unit.
func overrideRule(o *rlv3.RateLimitDescriptor_RateLimitOverride) *Rule {
	unit := pb.RateLimitResponse_RateLimit_Unit(o.GetUnit())
	if _, ok := units[unit]; !ok {
		return nil
	}
	mult := uint32(1)
	if m := o.GetUnitMultiplier(); m != nil && m.Value > 1 {
		mult = m.Value
	}
	l, err := makeLimit(o.GetRequestsPerUnit(), unit, mult, ratelimit.FixedWindow, 0, nil)
	if err != nil {
		return nil
	}
	return &Rule{RequestsPerUnit: o.GetRequestsPerUnit(), Unit: unit, UnitMultiplier: mult, Limit: l, sig: signature(unit, mult, l)}
}

// lookup returns the rule of descriptor d in domain, as the reference's
// GetLimit finds it, and the values of d's entries that share one budget
// (share_threshold: the wildcard in place of the value), nil if none.
func (c *Config) lookup(domain string, d *rlv3.RateLimitDescriptor) (*Rule, []string) {
	top := c.domains[domain]
	if top == nil {
		return nil, nil
	}
	if o := d.GetLimit(); o != nil {
		return overrideRule(o), nil
	}
	var rule *Rule
	var shared []string
	prev, children := top, top.children
	entries := d.GetEntries()
	for i, e := range entries {
		final := e.GetKey() + "_" + e.GetValue()
		next := children[final]
		matched := ""
		if next == nil {
			for _, w := range prev.wildcards {
				if strings.HasPrefix(final, strings.TrimSuffix(w, "*")) {
					next, matched = children[w], w
					break
				}
			}
		}
		if next == nil {
			next = children[e.GetKey()]
		}
		if matched != "" && next != nil && next.pattern != "" {
			if shared == nil {
				shared = make([]string, len(entries))
			}
			shared[i] = strings.TrimPrefix(next.pattern, e.GetKey()+"_")
		}
		if next != nil && next.rule != nil && i == len(entries)-1 {
			rule = next.rule
		}
		if next == nil || len(next.children) == 0 {
			break
		}
		prev, children = next, next.children
	}
	if rule == nil {
		return nil, nil
	}
	return rule, shared
}

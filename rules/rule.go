package rules

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
)

// shorthand are the rule fields that stand for a one-limit list.
var shorthand = []string{"rate", "period", "burst", "algorithm", "timezone"}

// rule parses the index-th rule, n, over the defaults in proto.
func (p *parser) rule(n *yaml.Node, index int, proto Rule, alg ratelimit.Algorithm) (Rule, error) {
	at := place{index: index}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := deref(n.Content[i]), deref(n.Content[i+1]); k.Value == "name" && v.Kind == yaml.ScalarNode {
				at.rule = v.Value // name the rule in every message, even one about an earlier field
			}
		}
	}
	pairs, err := p.fields(n, at, ruleFields)
	if err != nil {
		return Rule{}, err
	}
	r := proto
	r.Line = n.Line
	var short []pair
	var limits, plans *pair
	for _, f := range pairs {
		fat := at.in(f.name)
		switch {
		case f.name == "name":
			if r.Name, err = p.str(f.value, fat); err == nil && !validName(r.Name) {
				err = p.fail(f.value, fat, "%q: want 1 to 64 letters, digits, '.', '_' or '-'", r.Name)
			}
		case f.name == "match":
			r.Match, err = p.str(f.value, fat)
		case f.name == "limits":
			limits = &f
		case f.name == "plans":
			plans = &f
		case contains(responseFields, f.name):
			err = p.response(&r, f, fat) // count.go
		case contains(shorthand, f.name):
			short = append(short, f)
		default:
			err = p.setting(&r, f, fat)
		}
		if err != nil {
			return Rule{}, err
		}
	}
	if r.Name == "" {
		return Rule{}, p.fail(n, at, "field %q is required", "name")
	}
	if r.Match == "" {
		return Rule{}, p.fail(n, at, "field %q is required", "match")
	}
	switch {
	case limits != nil && len(short) > 0:
		return Rule{}, p.fail(short[0].key, at, "%s is shorthand for a one-limit list: give it or limits, not both", short[0].name)
	case limits != nil:
		lat := at.in("limits")
		if limits.value.Kind != yaml.SequenceNode || len(limits.value.Content) == 0 {
			return Rule{}, p.fail(limits.value, lat, "want a list of limits ({name, rate, period, burst, algorithm, key}), got %s", describe(limits.value))
		}
		r.Limits = nil
		for j, item := range limits.value.Content {
			item = deref(item)
			iat := place{rule: at.rule, index: index, field: fmt.Sprintf("limits[%d]", j+1)}
			fields, err := p.fields(item, iat, limitFields)
			if err != nil {
				return Rule{}, err
			}
			l, err := p.limit(item, fields, iat, alg)
			if err != nil {
				return Rule{}, err
			}
			r.Limits = append(r.Limits, l)
		}
	case len(short) > 0:
		l, err := p.limit(n, short, at, alg)
		if err != nil {
			return Rule{}, err
		}
		r.Limits = []Limit{l}
	case plans != nil:
		return Rule{}, p.fail(n, at, "%v", errNoOwnLimit)
	default:
		return Rule{}, p.fail(n, at, "want rate and period, or limits")
	}
	if err := p.nameLimits(&r, limits, at); err != nil {
		return Rule{}, err
	}
	r.Limit = r.Limits[0].Limit
	if plans != nil {
		if err := p.rulePlans(&r, plans, at); err != nil {
			return Rule{}, err
		}
	}
	for _, l := range r.Limits {
		if c := l.Limit.Capacity(); r.Cost > c {
			return Rule{}, p.fail(n, at.in("cost"), "%d is more than limit %q can ever hold (%d): no request could pass", r.Cost, l.Name, c)
		}
	}
	for _, pl := range r.Plans {
		for _, l := range pl.Limits {
			if c := l.Limit.Capacity(); r.Cost > c {
				return Rule{}, p.fail(n, at.in("cost"), "%d is more than limit %q of plan %q can ever hold (%d): no request on that plan could pass", r.Cost, l.Name, pl.Name, c)
			}
		}
	}
	return r, nil
}

// limit parses the fields of one limit.
func (p *parser) limit(n *yaml.Node, fields []pair, at place, alg ratelimit.Algorithm) (Limit, error) {
	l := Limit{Limit: ratelimit.Limit{Algorithm: alg}}
	var rate, period, burst, algorithm, timezone *yaml.Node
	var err error
	for _, f := range fields {
		fat := at.in(f.name)
		switch f.name {
		case "name":
			if l.Name, err = p.str(f.value, fat); err == nil && !validName(l.Name) {
				err = p.fail(f.value, fat, "%q: want 1 to 64 letters, digits, '.', '_' or '-'", l.Name)
			}
		case "rate":
			rate = f.value
			l.Limit.Rate, err = p.integer(f.value, fat)
		case "period":
			period = f.value
			if l.Limit.Calendar = calendarPeriod(f.value); l.Limit.Calendar == ratelimit.NoCalendar {
				l.Limit.Period, err = p.duration(f.value, fat)
			}
		case "timezone":
			timezone = f.value
			l.Limit.Zone, err = p.zone(f.value, fat)
		case "burst":
			burst = f.value
			l.Limit.Burst, err = p.integer(f.value, fat)
		case "algorithm":
			algorithm = f.value
			l.Limit.Algorithm, err = choice(p, f.value, fat, algorithmNames, algorithms)
		case "key":
			l.Key, err = p.key(f.value, fat)
		}
		if err != nil {
			return Limit{}, err
		}
	}
	switch {
	case rate == nil:
		return Limit{}, p.fail(n, at.in("rate"), "required")
	case period == nil:
		return Limit{}, p.fail(n, at.in("period"), "required")
	case timezone != nil && l.Limit.Calendar == ratelimit.NoCalendar:
		return Limit{}, p.fail(timezone, at.in("timezone"), "only a period of day or month has a time zone")
	}
	if err := p.calendar(&l.Limit, algorithm, at); err != nil {
		return Limit{}, err
	}
	if burst != nil && l.Limit.Algorithm != ratelimit.TokenBucket {
		return Limit{}, p.fail(burst, at.in("burst"), "only the token bucket has a burst, not the %v", l.Limit.Algorithm)
	}
	if err := l.Limit.Validate(); err != nil {
		where := rate
		if strings.Contains(err.Error(), "period") || strings.Contains(err.Error(), "fill") {
			where = period
		}
		return Limit{}, p.fail(where, at, "%s", errLimit(err))
	}
	return l, nil
}

// nameLimits names the rule's limits: the first as given, else after the
// rule; the others as given or rule-period ("api-1h"), made unique with -2,
// -3, ...
func (p *parser) nameLimits(r *Rule, limits *pair, at place) error {
	if r.Limits[0].Name == "" {
		r.Limits[0].Name = r.Name
	}
	taken := map[string]bool{r.Name: true, r.Limits[0].Name: true}
	for j := range r.Limits {
		l := &r.Limits[j]
		if l.Name == "" {
			continue
		}
		lat := at.in(fmt.Sprintf("limits[%d].name", j+1))
		var where *yaml.Node
		if limits != nil {
			where = deref(limits.value.Content[j])
		}
		if j > 0 && taken[l.Name] {
			return p.fail(where, lat, "%q is taken in this rule", l.Name)
		}
		taken[l.Name] = true
	}
	next := map[string]int{} // a base's next suffix to try: a rule of n limits of one period names them in O(n)
	for j := 1; j < len(r.Limits); j++ {
		l := &r.Limits[j]
		if l.Name != "" {
			continue
		}
		base := r.Name + "-" + formatPeriod(l.Limit.Period)
		if l.Limit.Calendar != ratelimit.NoCalendar {
			base = r.Name + "-" + l.Limit.Calendar.String() // "api-day"
		}
		if len(base) > 60 {
			base = base[:60]
		}
		name := base
		for k := max(next[base], 2); taken[name]; k++ {
			name = base + "-" + strconv.Itoa(k)
			next[base] = k + 1
		}
		l.Name = name
		taken[name] = true
	}
	return nil
}

// formatPeriod writes d as ratelimit.Limit.String does, without zero
// units: "1m", "1h", "1h30m", "1.5s".
func formatPeriod(d time.Duration) string {
	return strings.TrimPrefix(ratelimit.Limit{Rate: 1, Period: d}.String(), "1 per ")
}

// validName reports whether name passes ratelimit.WithName (and so
// WithPolicy), which holds the rule: 1 to 64 letters, digits, '.', '_' or
// '-'.
func validName(name string) bool {
	_, err := ratelimit.New(nameCheck{}, ratelimit.PerSecond(1), ratelimit.WithName(name))
	return err == nil
}

// nameCheck is the store of the limiter validName builds and never calls.
type nameCheck struct{}

func (nameCheck) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, nil
}

func (nameCheck) Local() bool { return true }

// patterns checks the rules' patterns as http.ServeMux will.
type patterns struct {
	mux   *http.ServeMux
	rules map[string]string // pattern: the rule's name
}

func newPatterns() patterns { return patterns{http.NewServeMux(), map[string]string{}} }

// registeredAt is the part of ServeMux's messages that names source files.
var registeredAt = regexp.MustCompile(` \(registered at [^)]*\)`)

// add registers rule's pattern, turning ServeMux's panic on a bad or
// conflicting pattern into an error that names the other rule.
func (ps patterns) add(pattern, rule string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			msg := registeredAt.ReplaceAllString(fmt.Sprint(v), "")
			msg = strings.TrimPrefix(msg, "http: ")
			for other, name := range ps.rules {
				if strings.Contains(msg, "conflicts with pattern "+strconv.Quote(other)) {
					msg = fmt.Sprintf("%s (rule %q)", msg, name)
					break
				}
			}
			err = errors.New(strings.ReplaceAll(msg, "\n", " "))
		}
	}()
	ps.mux.Handle(pattern, http.NotFoundHandler())
	ps.rules[pattern] = rule
	return nil
}

package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/internal/headername"
)

var algorithms = map[string]ratelimit.Algorithm{
	"token-bucket": ratelimit.TokenBucket, "fixed-window": ratelimit.FixedWindow,
	"sliding-window": ratelimit.SlidingWindow, "sliding-log": ratelimit.SlidingLog,
}
var algorithmNames = []string{"token-bucket", "fixed-window", "sliding-window", "sliding-log"}

var headerStyles = map[string]ratelimit.HeaderStyle{
	"x-ratelimit": ratelimit.HeadersXRateLimit, "ietf": ratelimit.HeadersIETF,
	"both": ratelimit.HeadersBoth, "none": ratelimit.HeadersNone,
}
var headerNames = []string{"x-ratelimit", "ietf", "both", "none"}

var onErrors = map[string]bool{"open": false, "closed": true}

// parse parses the rules file data, named file in messages.
func parse(file string, data []byte) (*Config, error) {
	p := &parser{file: file}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.fail(nil, place{}, "no rules")
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		}
		return nil, &Error{File: file, Line: line, Err: errors.New(msg)}
	}
	var rest yaml.Node
	if err := dec.Decode(&rest); !errors.Is(err, io.EOF) {
		return nil, p.fail(&rest, place{}, "one document per file, please")
	}
	return p.config(&doc)
}

func (p *parser) config(doc *yaml.Node) (*Config, error) {
	pairs, err := p.fields(doc, place{}, fileFields)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	// defaults are applied to every rule: the prototype rule holds them.
	proto := Rule{Key: []string{"ip"}, Cost: 1}
	alg := ratelimit.TokenBucket
	var rules, plans *yaml.Node
	for _, f := range pairs {
		at := place{field: f.name}
		switch f.name {
		case "trusted_proxies":
			list, err := p.list(f.value, at)
			if err != nil {
				return nil, err
			}
			for _, s := range list {
				prefix, err := netip.ParsePrefix(s)
				if err != nil {
					if addr, aerr := netip.ParseAddr(s); aerr == nil {
						prefix = netip.PrefixFrom(addr, addr.BitLen())
					} else {
						return nil, p.fail(f.value, at, "%q is not an address or a prefix such as 10.0.0.0/8", s)
					}
				}
				c.TrustedProxies = append(c.TrustedProxies, prefix)
			}
		case "client_ip_header":
			if c.ClientIPHeader, err = p.str(f.value, at); err != nil {
				return nil, err
			}
			if !headername.Valid(c.ClientIPHeader) {
				return nil, p.fail(f.value, at, "%q is not a header name", c.ClientIPHeader)
			}
		case "trust_unix_socket":
			if c.TrustUnixSocket, err = p.boolean(f.value, at); err != nil {
				return nil, err
			}
		case "defaults":
			settings, err := p.fields(f.value, at, defaultFields)
			if err != nil {
				return nil, err
			}
			for _, s := range settings {
				sat := at.in(s.name)
				if s.name == "algorithm" {
					if alg, err = choice(p, s.value, sat, algorithmNames, algorithms); err != nil {
						return nil, err
					}
					continue
				}
				if err := p.setting(&proto, s, sat); err != nil {
					return nil, err
				}
			}
		case "plans":
			plans = f.value
		case "rules":
			rules = f.value
		}
	}
	if plans != nil { // after the defaults, whose algorithm the plans' limits take
		if c.Plans, err = p.filePlans(plans, alg); err != nil {
			return nil, err
		}
	}
	if rules == nil || rules.Kind == yaml.ScalarNode && rules.ShortTag() == "!!null" {
		return nil, p.fail(doc, place{}, "no rules")
	}
	if rules.Kind != yaml.SequenceNode {
		return nil, p.fail(rules, place{field: "rules"}, "want a list of rules, got %s", describe(rules))
	}
	if len(rules.Content) == 0 {
		return nil, p.fail(rules, place{field: "rules"}, "no rules")
	}
	names := map[string]int{}
	limiters := limiterNames{}
	patterns := newPatterns()
	for i, n := range rules.Content {
		r, err := p.rule(deref(n), i+1, proto, alg)
		if err != nil {
			return nil, err
		}
		at := place{rule: r.Name, index: i + 1}
		if line, ok := names[r.Name]; ok {
			return nil, p.fail(n, at.in("name"), "used twice (first on line %d)", line)
		}
		names[r.Name] = r.Line
		if err := limiters.claim(r); err != nil {
			return nil, p.fail(n, at.in("limits[1].name"), "%v", err)
		}
		if err := patterns.add(r.Match, r.Name); err != nil {
			return nil, p.fail(n, at.in("match"), "%v", err)
		}
		c.Rules = append(c.Rules, r)
	}
	return c, nil
}

// setting sets one of the fields a rule shares with the defaults.
func (p *parser) setting(r *Rule, f pair, at place) error {
	var err error
	switch f.name {
	case "key":
		r.Key, err = p.key(f.value, at)
	case "cost":
		r.Cost, err = p.integer(f.value, at)
		if err == nil && r.Cost < 0 {
			err = p.fail(f.value, at, "%d is negative", r.Cost)
		}
	case "headers":
		r.Headers, err = choice(p, f.value, at, headerNames, headerStyles)
	case "dry_run":
		r.DryRun, err = p.boolean(f.value, at)
	case "on_error":
		r.FailClosed, err = choice(p, f.value, at, []string{"open", "closed"}, onErrors)
	case "timeout":
		d, derr := p.duration(f.value, at)
		if err = derr; err == nil && d < 0 {
			err = p.fail(f.value, at, "%v is negative", d)
		}
		r.Timeout = &d
	case "problem_json":
		r.ProblemJSON, err = p.boolean(f.value, at)
	case "deny_cache":
		n, nerr := p.integer(f.value, at)
		if err = nerr; err == nil && n < 0 {
			err = p.fail(f.value, at, "%d is negative", n)
		}
		r.DenyCache = &n
	case "breaker":
		r.Breaker, err = p.breaker(f.value, at)
	default:
		err = p.fail(f.key, at, "unknown field %q", f.name) // not reached: fields checked the names
	}
	return err
}

// breaker parses "off" or {failures, cool_down}.
func (p *parser) breaker(n *yaml.Node, at place) (*Breaker, error) {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "off" || n.ShortTag() == "!!bool" && n.Value == "false" {
			return &Breaker{Off: true}, nil
		}
		return nil, p.fail(n, at, "want off or fields (failures, cool_down), got %s", describe(n))
	}
	pairs, err := p.fields(n, at, breakerFields)
	if err != nil {
		return nil, err
	}
	b := &Breaker{Failures: 5, CoolDown: 500 * time.Millisecond}
	for _, f := range pairs {
		fat := at.in(f.name)
		switch f.name {
		case "failures":
			if b.Failures, err = p.integer(f.value, fat); err == nil && b.Failures < 1 {
				err = p.fail(f.value, fat, "want at least 1, got %d", b.Failures)
			}
		case "cool_down":
			if b.CoolDown, err = p.duration(f.value, fat); err == nil && b.CoolDown <= 0 {
				err = p.fail(f.value, fat, "want a positive duration, got %v", b.CoolDown)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

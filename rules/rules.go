// Package rules builds rate limiters from a YAML file of rules, one limit
// per route:
//
//	trusted_proxies: [10.0.0.0/8]      # believe X-Forwarded-For from these
//	rules:
//	  - name: home
//	    match: "GET /{$}"              # an http.ServeMux pattern
//	    rate: 10
//	    period: 1m
//	  - name: api
//	    match: /api/
//	    rate: 100
//	    period: 1m
//	    burst: 20
//	    key: [header:X-API-Key, ip]    # the API key, else the client address
//	    headers: both
//	  - name: export
//	    match: "POST /export"
//	    rate: 20
//	    period: 1h
//	    algorithm: sliding-log
//	    cost: 5
//
// Fields: name (required; namespaces the rule's keys), match (required),
// rate and period (required; period as in time.ParseDuration), burst
// (token bucket only; 0 means rate), algorithm (token-bucket, the default,
// fixed-window, sliding-window or sliding-log), key (one of ip, route,
// header:NAME, or parts joined with "+" such as route+ip; a list means the
// first that the request has; default ip), cost (tokens per request,
// default 1) and headers (x-ratelimit, the default, ietf, both or none).
// Unknown fields and bad values are errors that name the rule.
package rules

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
)

// Config is a parsed rules file.
type Config struct {
	// TrustedProxies are the proxies whose forwarding headers the ip key
	// believes (see ratelimit.TrustProxies); none by default.
	TrustedProxies []netip.Prefix
	Rules          []Rule // in the order of the file
}

// Rule is one rule of a rules file, checked.
type Rule struct {
	Name    string                // the limiter's name: its namespace in the store
	Match   string                // http.ServeMux pattern
	Limit   ratelimit.Limit       // the rule's limit
	Key     []string              // alternatives, each of parts joined with "+"
	Cost    int                   // tokens per request
	Headers ratelimit.HeaderStyle // the rate-limit headers written
}

// file is the YAML form of Config.
type file struct {
	TrustedProxies []string   `yaml:"trusted_proxies"`
	Rules          []yamlRule `yaml:"rules"`
}

type yamlRule struct {
	Name      string  `yaml:"name"`
	Match     string  `yaml:"match"`
	Rate      int     `yaml:"rate"`
	Period    string  `yaml:"period"`
	Burst     int     `yaml:"burst"`
	Algorithm string  `yaml:"algorithm"`
	Key       keyList `yaml:"key"`
	Cost      *int    `yaml:"cost"`
	Headers   string  `yaml:"headers"`
}

// keyList is a key: one string or a list of them.
type keyList []string

func (k *keyList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*k = keyList{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*k = list
	return nil
}

var algorithms = map[string]ratelimit.Algorithm{
	"": ratelimit.TokenBucket, "token-bucket": ratelimit.TokenBucket,
	"fixed-window": ratelimit.FixedWindow, "sliding-window": ratelimit.SlidingWindow,
	"sliding-log": ratelimit.SlidingLog,
}

var headerStyles = map[string]ratelimit.HeaderStyle{
	"": ratelimit.HeadersXRateLimit, "x-ratelimit": ratelimit.HeadersXRateLimit,
	"ietf": ratelimit.HeadersIETF, "both": ratelimit.HeadersBoth, "none": ratelimit.HeadersNone,
}

// Load reads and parses the rules file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse parses and checks a rules file.
func Parse(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	c := &Config{}
	for _, p := range f.TrustedProxies {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("rules: trusted_proxies: %w", err)
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix)
	}
	if len(f.Rules) == 0 {
		return nil, errors.New("rules: no rules")
	}
	seen := map[string]bool{}
	for i, y := range f.Rules {
		r, err := y.check()
		if err != nil {
			return nil, fmt.Errorf("rules: rule %d (%q): %w", i+1, y.Name, err)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("rules: rule %d: name %q used twice", i+1, r.Name)
		}
		seen[r.Name] = true
		c.Rules = append(c.Rules, r)
	}
	return c, nil
}

func (y yamlRule) check() (Rule, error) {
	r := Rule{Name: y.Name, Match: y.Match, Key: y.Key, Cost: 1}
	if y.Name == "" || y.Match == "" {
		return r, errors.New("name and match are required")
	}
	period, err := time.ParseDuration(y.Period)
	if err != nil {
		return r, fmt.Errorf("period: %w", err)
	}
	alg, ok := algorithms[y.Algorithm]
	if !ok {
		return r, fmt.Errorf("unknown algorithm %q (token-bucket, fixed-window, sliding-window or sliding-log)", y.Algorithm)
	}
	r.Limit = ratelimit.Limit{Rate: y.Rate, Period: period, Burst: y.Burst, Algorithm: alg}
	if err := r.Limit.Validate(); err != nil {
		return r, err
	}
	if y.Burst != 0 && alg != ratelimit.TokenBucket {
		return r, fmt.Errorf("burst is for the token bucket only, not the %v", alg)
	}
	if r.Headers, ok = headerStyles[y.Headers]; !ok {
		return r, fmt.Errorf("unknown headers %q (x-ratelimit, ietf, both or none)", y.Headers)
	}
	if y.Cost != nil {
		r.Cost = *y.Cost
	}
	if r.Cost < 0 || r.Cost > r.Limit.Capacity() {
		return r, fmt.Errorf("cost %d: want 0 to the limit's capacity, %d", r.Cost, r.Limit.Capacity())
	}
	if len(r.Key) == 0 {
		r.Key = []string{"ip"}
	}
	if _, err := keyFunc(r.Key, nil); err != nil {
		return r, err
	}
	return r, nil
}

// keyFunc builds the KeyFunc of a key list.
func keyFunc(alternatives []string, trusted []netip.Prefix) (ratelimit.KeyFunc, error) {
	var first []ratelimit.KeyFunc
	for _, alt := range alternatives {
		var parts []ratelimit.KeyFunc
		for _, part := range strings.Split(alt, "+") {
			part = strings.TrimSpace(part)
			switch name, ok := strings.CutPrefix(part, "header:"); {
			case part == "ip":
				parts = append(parts, ratelimit.KeyByIP(ratelimit.TrustProxies(trusted...)))
			case part == "route":
				parts = append(parts, ratelimit.KeyByRoute())
			case ok && name != "":
				parts = append(parts, ratelimit.KeyByHeader(name))
			default:
				return nil, fmt.Errorf("unknown key %q (ip, route, header:NAME, or parts joined with +)", part)
			}
		}
		if len(parts) == 1 {
			first = append(first, parts[0])
		} else {
			first = append(first, ratelimit.Compose(parts...))
		}
	}
	if len(first) == 1 {
		return first[0], nil
	}
	return ratelimit.FirstOf(first...), nil
}

// Limiter builds the rule's limiter on store, with opts after the rule's
// own options (so they can override them).
func (c *Config) Limiter(r Rule, store ratelimit.Store, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	kf, err := keyFunc(r.Key, c.TrustedProxies)
	if err != nil {
		return nil, err
	}
	cost := r.Cost
	all := append([]ratelimit.Option{
		ratelimit.WithName(r.Name),
		ratelimit.WithKeyFunc(kf),
		ratelimit.WithHeaders(r.Headers),
		ratelimit.WithCost(func(*http.Request) int { return cost }),
	}, opts...)
	return ratelimit.New(store, r.Limit, all...)
}

// Handler returns next behind the config's rules: a request that matches
// a rule's pattern (as http.ServeMux matches, most specific first) passes
// through that rule's limiter first; one that matches none goes straight to
// next. The rules only choose limiters: next still routes the request.
// opts apply to every rule's limiter.
func (c *Config) Handler(store ratelimit.Store, next http.Handler, opts ...ratelimit.Option) (http.Handler, error) {
	mux := http.NewServeMux()
	limiters := map[string]*ratelimit.Limiter{}
	for _, r := range c.Rules {
		l, err := c.Limiter(r, store, opts...)
		if err != nil {
			return nil, fmt.Errorf("rules: rule %q: %w", r.Name, err)
		}
		if err := register(mux, r.Match); err != nil {
			return nil, fmt.Errorf("rules: rule %q: %w", r.Name, err)
		}
		limiters[r.Match] = l
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, pattern := mux.Handler(req)
		l, ok := limiters[pattern]
		if !ok {
			next.ServeHTTP(w, req)
			return
		}
		keyed := req.WithContext(req.Context()) // the limiter sees the rule's pattern
		keyed.Pattern = pattern
		if l.Admit(w, keyed) {
			next.ServeHTTP(w, req)
		}
	}), nil
}

// register adds pattern to mux, turning ServeMux's panic on a bad or
// conflicting pattern into an error.
func register(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}

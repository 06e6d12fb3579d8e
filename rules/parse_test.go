package rules_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const sample = `
trusted_proxies: [10.0.0.0/8]
rules:
  - name: home
    match: "GET /{$}"
    rate: 2
    period: 1m
  - name: api
    match: /api/
    rate: 3
    period: 1h
    burst: 1
    key: [header:X-API-Key, ip]
    headers: both
  - name: export
    match: "POST /export"
    rate: 10
    period: 1h
    algorithm: sliding-log
    cost: 5
  - name: items
    match: "/items/{id}"
    rate: 1
    period: 1h
    key: route
`

// TestParse: a file of the first format, one limit per rule, still parses
// to the same rules.
func TestParse(t *testing.T) {
	c, err := rules.Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rules) != 4 || len(c.TrustedProxies) != 1 {
		t.Fatalf("parsed %d rules, %d proxies", len(c.Rules), len(c.TrustedProxies))
	}
	api := c.Rules[1]
	want := ratelimit.Limit{Rate: 3, Period: time.Hour, Burst: 1}
	if api.Limit != want || api.Cost != 1 || api.Headers != ratelimit.HeadersBoth || len(api.Key) != 2 {
		t.Fatalf("api rule = %+v", api)
	}
	if len(api.Limits) != 1 || api.Limits[0].Name != "api" || api.Limits[0].Limit != want || api.Limits[0].Key != nil {
		t.Fatalf("api limits = %+v", api.Limits)
	}
	if e := c.Rules[2]; e.Limit.Algorithm != ratelimit.SlidingLog || e.Cost != 5 {
		t.Fatalf("export rule = %+v", e)
	}
	if h := c.Rules[0]; h.DryRun || h.FailClosed || h.Timeout != nil || h.ProblemJSON || h.DenyCache != nil || h.Breaker != nil || h.Line != 4 {
		t.Fatalf("home rule has settings it was not given: %+v", h)
	}
}

func TestParseLimits(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - name: api
    match: "GET /api/"
    key: [header:X-API-Key, ip]
    limits:
      - {rate: 10, period: 1s, burst: 20}
      - {rate: 1000, period: 1h}
      - {rate: 2000, period: 1h, algorithm: sliding-window}
      - {name: per-ip, rate: 120, period: 1m, key: ip}
      - {rate: 5, period: 1.5s}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rules[0]
	want := []rules.Limit{
		{Name: "api", Limit: ratelimit.PerSecond(10).WithBurst(20)},
		{Name: "api-1h", Limit: ratelimit.PerHour(1000)},
		{Name: "api-1h-2", Limit: ratelimit.PerHour(2000).WithAlgorithm(ratelimit.SlidingWindow)},
		{Name: "per-ip", Limit: ratelimit.PerMinute(120), Key: []string{"ip"}},
		{Name: "api-1.5s", Limit: ratelimit.Limit{Rate: 5, Period: 1500 * time.Millisecond}},
	}
	if len(r.Limits) != len(want) {
		t.Fatalf("limits = %+v", r.Limits)
	}
	for i := range want {
		got := r.Limits[i]
		if got.Name != want[i].Name || got.Limit != want[i].Limit || strings.Join(got.Key, ",") != strings.Join(want[i].Key, ",") {
			t.Errorf("limit %d = %+v, want %+v", i+1, got, want[i])
		}
	}
	if r.Limit != want[0].Limit {
		t.Errorf("Rule.Limit = %v, want the first limit, %v", r.Limit, want[0].Limit)
	}
}

// TestParseNamesTheFirstLimitToo: every entry of limits may be named, the
// first too; its name then names the rule's limiter and its policy.
func TestParseNamesTheFirstLimitToo(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - name: api
    match: "GET /api/"
    limits:
      - {name: burst, rate: 10, period: 1s}
      - {rate: 1000, period: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rules[0]
	if r.Limits[0].Name != "burst" || r.Limits[1].Name != "api-1h" {
		t.Fatalf("limit names %q and %q, want burst and api-1h", r.Limits[0].Name, r.Limits[1].Name)
	}
	store := memory.New()
	defer store.Close()
	l, err := c.Limiter(r, store)
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Policies(); len(p) != 2 || p[0].Name != "burst" || p[1].Name != "api-1h" {
		t.Errorf("the limiter's policies %+v, want burst and api-1h", p)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := rules.Parse([]byte(`
client_ip_header: X-Real-IP
trust_unix_socket: true
defaults:
  key: user
  algorithm: fixed-window
  cost: 2
  headers: ietf
  dry_run: true
  on_error: closed
  timeout: 50ms
  problem_json: true
  deny_cache: 100
  breaker: {failures: 3, cool_down: 2s}
rules:
  - {name: a, match: /a, rate: 5, period: 1m}
  - name: b
    match: /b
    rate: 5
    period: 1m
    algorithm: token-bucket
    key: ip
    cost: 1
    headers: none
    dry_run: false
    on_error: open
    timeout: 0
    problem_json: false
    deny_cache: 0
    breaker: off
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ClientIPHeader != "X-Real-IP" || !c.TrustUnixSocket {
		t.Errorf("config = %+v", c)
	}
	a, b := c.Rules[0], c.Rules[1]
	if a.Limit.Algorithm != ratelimit.FixedWindow || a.Key[0] != "user" || a.Cost != 2 || a.Headers != ratelimit.HeadersIETF ||
		!a.DryRun || !a.FailClosed || *a.Timeout != 50*time.Millisecond || !a.ProblemJSON || *a.DenyCache != 100 ||
		*a.Breaker != (rules.Breaker{Failures: 3, CoolDown: 2 * time.Second}) {
		t.Errorf("rule a does not have the defaults: %+v", a)
	}
	if b.Limit.Algorithm != ratelimit.TokenBucket || b.Key[0] != "ip" || b.Cost != 1 || b.Headers != ratelimit.HeadersNone ||
		b.DryRun || b.FailClosed || *b.Timeout != 0 || b.ProblemJSON || *b.DenyCache != 0 || !b.Breaker.Off {
		t.Errorf("rule b does not override the defaults: %+v", b)
	}
}

// TestParseErrors: each error names the line, the rule and the field, and
// no Go type.
func TestParseErrors(t *testing.T) {
	rule := func(fields string) string {
		return "rules:\n  - name: r\n    match: /\n" + fields
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"no rules", "rules: []", "rules: line 1: rules: no rules"},
		{"empty file", "", "rules: no rules"},
		{"unknown field", rule("    rate: 1\n    period: 1s\n    burts: 2\n"),
			`rules: line 6: rule "r": unknown field "burts" (fields: name, match, rate, period, timezone, burst, algorithm, key, limits, plans, cost, headers, dry_run, on_error, timeout, problem_json, deny_cache, breaker, count, block)`},
		{"unknown field before the name", "rules:\n  - burts: 2\n    name: r\n", `line 2: rule "r": unknown field "burts"`},
		{"unknown top-level field", "rule: []\n", `rules: line 1: unknown field "rule" (fields: trusted_proxies, client_ip_header, trust_unix_socket, defaults, plans, rules)`},
		{"unknown field of a limit", rule("    limits:\n      - {rate: 1, period: 1s, burts: 2}\n"), `line 5: rule "r": limits[1]: unknown field "burts" (fields: name, rate, period, timezone, burst, algorithm, key)`},
		{"unknown default", "defaults: {name: x}\n" + rule("    rate: 1\n    period: 1s\n"), `line 1: defaults: unknown field "name"`},
		{"field twice", rule("    rate: 1\n    rate: 2\n    period: 1s\n"), `line 5: rule "r": field "rate" given twice (first on line 4)`},
		{"missing rate", rule("    period: 1s\n"), `line 2: rule "r": rate: required`},
		{"missing limits", rule(""), `line 2: rule "r": want rate and period, or limits`},
		{"zero rate", rule("    rate: 0\n    period: 1s\n"), `line 4: rule "r": invalid limit: rate 0 must be positive`},
		{"rate not a number", rule("    rate: ten\n    period: 1s\n"), `line 4: rule "r": rate: want a whole number, got "ten"`},
		{"bad period", rule("    rate: 1\n    period: soon\n"), `line 5: rule "r": period: "soon" is not a duration`},
		{"bad period of a limit", rule("    limits:\n      - rate: 1\n        period: soon\n"), `line 6: rule "r": limits[1].period: "soon" is not a duration`},
		{"unknown algorithm", rule("    rate: 1\n    period: 1s\n    algorithm: leaky\n"), `line 6: rule "r": algorithm: unknown value "leaky" (token-bucket, fixed-window, sliding-window, sliding-log)`},
		{"burst on a window", rule("    rate: 1\n    period: 1s\n    burst: 5\n    algorithm: fixed-window\n"), `line 6: rule "r": burst: only the token bucket has a burst, not the fixed window`},
		{"unknown key", rule("    rate: 1\n    period: 1s\n    key: cookie\n"), `line 6: rule "r": key: unknown key "cookie"`},
		{"cost above capacity", rule("    rate: 1\n    period: 1s\n    cost: 2\n"), `rule "r": cost: 2 is more than limit "r" can ever hold (1)`},
		{"cost above a second limit's capacity", rule("    cost: 3\n    limits:\n      - {rate: 5, period: 1s}\n      - {rate: 2, period: 1m}\n"), `cost: 3 is more than limit "r-1m" can ever hold (2)`},
		{"unknown headers", rule("    rate: 1\n    period: 1s\n    headers: rfc\n"), `line 6: rule "r": headers: unknown value "rfc" (x-ratelimit, ietf, both, none)`},
		{"bad on_error", rule("    rate: 1\n    period: 1s\n    on_error: ignore\n"), `on_error: unknown value "ignore" (open, closed)`},
		{"bad dry_run", rule("    rate: 1\n    period: 1s\n    dry_run: yes please\n"), `dry_run: want true or false, got "yes please"`},
		{"negative timeout", rule("    rate: 1\n    period: 1s\n    timeout: -1s\n"), `timeout: -1s is negative`},
		{"bad breaker", rule("    rate: 1\n    period: 1s\n    breaker: {failures: 0}\n"), `breaker.failures: want at least 1, got 0`},
		{"missing match", "rules:\n  - name: r\n    rate: 1\n    period: 1s\n", `line 2: rule "r": field "match" is required`},
		{"missing name", "rules:\n  - match: /\n    rate: 1\n    period: 1s\n", `line 2: rule 1: field "name" is required`},
		{"bad name", rule("    rate: 1\n    period: 1s\n") + "  - {name: a/b, match: /x, rate: 1, period: 1s}\n", `line 6: rule "a/b": name: "a/b": want 1 to 64 letters`},
		{"name twice", rule("    rate: 1\n    period: 1s\n") + "  - {name: r, match: /x, rate: 1, period: 1s}\n", `line 6: rule "r": name: used twice (first on line 2)`},
		{"both forms", rule("    rate: 1\n    limits:\n      - {rate: 1, period: 1s}\n"), `line 4: rule "r": rate is shorthand for a one-limit list: give it or limits, not both`},
		{"first limit named as another rule", rule("    limits:\n      - {name: x, rate: 1, period: 1s}\n") + "  - {name: x, match: /x, rate: 1, period: 1s}\n", `line 6: rule "x": limits[1].name: "x" names rule "r" or its first limit`},
		{"first limits of two rules named alike", rule("    limits:\n      - {name: x, rate: 1, period: 1s}\n") + "  - {name: y, match: /x, limits: [{name: x, rate: 1, period: 1s}]}\n", `rule "y": limits[1].name: "x" names rule "r" or its first limit`},
		{"a rule named as another's first limit", rule("    rate: 1\n    period: 1s\n") + "  - {name: x, match: /x, limits: [{name: r, rate: 1, period: 1s}]}\n", `rule "x": limits[1].name: "r" names rule "r" or its first limit`},
		{"a later limit named as the rule", rule("    limits:\n      - {name: x, rate: 1, period: 1s}\n      - {name: r, rate: 1, period: 1m}\n"), `rule "r": limits[2].name: "r" is taken in this rule`},
		{"limit name twice", rule("    limits:\n      - {rate: 1, period: 1s}\n      - {name: x, rate: 1, period: 1m}\n      - {name: x, rate: 1, period: 1h}\n"), `line 7: rule "r": limits[3].name: "x" is taken in this rule`},
		{"bad proxy", "trusted_proxies: [nope]\n" + rule("    rate: 1\n    period: 1s\n"), `line 1: trusted_proxies: "nope" is not an address or a prefix`},
		{"bad pattern", rule("    rate: 1\n    period: 1s\n") + "  - {name: x, match: \"GET\", rate: 1, period: 1s}\n", `line 6: rule "x": match: `},
		{"conflicting patterns", rule("    rate: 1\n    period: 1s\n") + "  - {name: x, match: /, rate: 1, period: 1s}\n", `line 6: rule "x": match: pattern "/" conflicts with pattern "/": / matches the same requests as / (rule "r")`},
		{"not yaml", "rules: [", "rules: line 1: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rules.Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant one containing %s", err, tt.want)
			}
			for _, goName := range []string{"rules.", "yamlRule", " int", "string", "registered at"} {
				if strings.Contains(err.Error(), goName) {
					t.Errorf("error %q names %q", err, goName)
				}
			}
			var e *rules.Error
			if !errors.As(err, &e) {
				t.Errorf("error %v is not a *rules.Error", err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := rules.Load(path); err != nil || len(c.Rules) != 4 {
		t.Fatalf("Load = %v, %v", c, err)
	}
	if _, err := rules.Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("Load of a missing file: no error")
	}
	bad := strings.Replace(sample, "burst: 1", "burts: 1", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := rules.Load(path)
	if want := path + `:12: rule "api": unknown field "burts"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Load of a bad file: %v, want an error starting %q", err, want)
	}
}

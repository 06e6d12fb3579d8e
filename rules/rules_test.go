package rules_test

import (
	"net/http"
	"net/http/httptest"
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
	if e := c.Rules[2]; e.Limit.Algorithm != ratelimit.SlidingLog || e.Cost != 5 {
		t.Fatalf("export rule = %+v", e)
	}
}

func TestParseErrors(t *testing.T) {
	rule := func(fields string) string {
		return "rules:\n  - name: r\n    match: /\n" + fields
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"no rules", "rules: []", "no rules"},
		{"unknown field", rule("    rate: 1\n    period: 1s\n    rat: 2\n"), "rat"},
		{"missing rate", rule("    period: 1s\n"), "rate 0 must be positive"},
		{"bad period", rule("    rate: 1\n    period: soon\n"), "period"},
		{"unknown algorithm", rule("    rate: 1\n    period: 1s\n    algorithm: leaky\n"), "unknown algorithm"},
		{"burst on a window", rule("    rate: 1\n    period: 1s\n    burst: 5\n    algorithm: fixed-window\n"), "burst is for the token bucket"},
		{"unknown key", rule("    rate: 1\n    period: 1s\n    key: cookie\n"), "unknown key"},
		{"cost above capacity", rule("    rate: 1\n    period: 1s\n    cost: 2\n"), "cost 2"},
		{"unknown headers", rule("    rate: 1\n    period: 1s\n    headers: rfc\n"), "unknown headers"},
		{"missing match", "rules:\n  - name: r\n    rate: 1\n    period: 1s\n", "match are required"},
		{"bad proxy", "trusted_proxies: [nope]\n" + rule("    rate: 1\n    period: 1s\n"), "trusted_proxies"},
		{"not yaml", "rules: [", "rules:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rules.Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestConflictingPatternsAreAnError(t *testing.T) {
	c, err := rules.Parse([]byte("rules:\n  - {name: a, match: /x, rate: 1, period: 1s}\n  - {name: b, match: /x, rate: 1, period: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	if _, err := c.Handler(store, http.NotFoundHandler()); err == nil {
		t.Fatal("two rules on one pattern: no error")
	}
}

func TestHandler(t *testing.T) {
	c, err := rules.Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	served := 0
	h, err := c.Handler(store, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, header map[string]string) int {
		r := httptest.NewRequest(method, path, nil)
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	codes := func(n int, method, path string, header map[string]string) []int {
		var out []int
		for range n {
			out = append(out, do(method, path, header))
		}
		return out
	}
	check := func(what string, got []int, want ...int) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	check("home", codes(3, "GET", "/", nil), 200, 200, 429)
	check("unmatched paths pass", codes(5, "GET", "/other", nil), 200, 200, 200, 200, 200)
	check("api per key, burst 1", codes(2, "GET", "/api/x", map[string]string{"X-API-Key": "k1"}), 200, 429)
	check("api, another key", codes(1, "GET", "/api/x", map[string]string{"X-API-Key": "k2"}), 200)
	check("api without a key: per IP", codes(2, "GET", "/api/x", nil), 200, 429)
	check("export costs 5 of 10", codes(3, "POST", "/export", nil), 200, 200, 429)
	check("GET /export is not the POST rule", codes(3, "GET", "/export", nil), 200, 200, 200)
	check("items: one budget for the route", append(codes(1, "GET", "/items/1", nil), codes(1, "GET", "/items/2", nil)...), 200, 429)
	if served != 16 {
		t.Fatalf("next served %d requests, want the 16 that were admitted", served)
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
}

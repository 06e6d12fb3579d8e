package rules_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// login answers 200 to the right password, 403 to a locked account and
// 401 to every other.
var login = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.FormValue("password") {
	case "right":
		w.Write([]byte("welcome"))
	case "locked":
		w.WriteHeader(http.StatusForbidden)
	default:
		w.WriteHeader(http.StatusUnauthorized)
	}
})

// post sends a login with password to h and returns the status.
func post(h http.Handler, password string) int {
	r := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"password": {password}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

func posts(h http.Handler, passwords ...string) []int {
	var out []int
	for _, p := range passwords {
		out = append(out, post(h, p))
	}
	return out
}

// TestLoginCountsOnlyFailures: a login rule that counts 401 and 403 lets
// right passwords through however many, and denies the address once it
// failed its rate.
func TestLoginCountsOnlyFailures(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - name: login
    match: "POST /login"
    rate: 3
    period: 15m
    algorithm: sliding-log
    count: [401, 403]
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := c.Handler(store, login)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "right passwords never count", posts(h, "right", "right", "right", "right", "right"), 200, 200, 200, 200, 200)
	check(t, "401 and 403 count, 3 of them", posts(h, "wrong", "locked", "wrong"), 401, 403, 401)
	check(t, "then even the right one is denied", posts(h, "right", "wrong"), 429, 429)
	if got := h.(*rules.Handler).Config().Rules[0].String(); got != "POST /login login: 3 per 15m (sliding log) per ip (counts 401, 403)" {
		t.Errorf("rule: %s", got)
	}
}

// TestCountIfFromLimiterOptions: a WithCountIf given to every limiter
// counts as a count in the file does.
func TestCountIfFromLimiterOptions(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - {name: login, match: "POST /login", rate: 2, period: 15m}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(c, store, login,
		rules.WithLimiterOptions(ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized))))
	if err != nil {
		t.Fatal(err)
	}
	check(t, "right passwords never count", posts(h, "right", "right", "right"), 200, 200, 200)
	check(t, "two failures, then denied", posts(h, "wrong", "wrong", "right"), 401, 401, 429)
}

// TestBlock: once denied, a key waits out the block, not the next token.
func TestBlock(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - {name: login, match: "POST /login", rate: 2, period: 1s, count: 401, block: 15m}
  - {name: api, match: /api/, rate: 1, period: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := c.Handler(store, login)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "two failures, then the block", posts(h, "wrong", "wrong", "right"), 401, 401, 429)
	r := httptest.NewRequest("POST", "/login", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if got := w.Header().Get("Retry-After"); got != "900" {
		t.Fatalf("Retry-After %q, want the block's 900 seconds", got)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/", nil))
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/", nil))
	if got := w.Header().Get("Retry-After"); got != "1" {
		t.Fatalf("a rule without a block: Retry-After %q, want 1", got)
	}
}

// TestCountKeepsTheWriter: the writer a counting rule hands on still
// reaches the server's through http.ResponseController.
func TestCountKeepsTheWriter(t *testing.T) {
	c, err := rules.Parse([]byte("rules:\n  - {name: r, match: /, rate: 9, period: 1s, count: [500]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	var flushErr error
	h, err := c.Handler(store, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flushErr = http.NewResponseController(w).Flush()
	}))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if flushErr != nil || !w.Flushed {
		t.Fatalf("Flush through the rules: %v, flushed %v", flushErr, w.Flushed)
	}
}

func TestParseResponseErrors(t *testing.T) {
	rule := func(fields string) string {
		return "rules:\n  - name: r\n    match: /\n    rate: 9\n    period: 1s\n" + fields
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"no codes", rule("    count: []\n"), `line 6: rule "r": count: no status codes: want a list such as [401, 403]`},
		{"below 100", rule("    count: [401, 99]\n"), `line 6: rule "r": count: 99 is not an HTTP status code (100 to 599)`},
		{"above 599", rule("    count: 600\n"), `count: 600 is not an HTTP status code (100 to 599)`},
		{"a code twice", rule("    count: [401, 403, 401]\n"), `rule "r": count: 401 given twice`},
		{"a class", rule("    count: [4xx]\n"), `count: want a status code such as 401, or a list of them, got "4xx"`},
		{"a fraction", rule("    count: [401.5]\n"), `count: want a status code such as 401, or a list of them, got "401.5"`},
		{"nothing", rule("    count:\n"), `count: want a status code such as 401, or a list of them, got nothing`},
		{"a huge number", rule("    count: [99999999999999999999]\n"), `count: want a status code such as 401, or a list of them, got "99999999999999999999"`},
		{"a code past int", rule("    count: [0x7fffffffffffffff]\n"), `count: 0x7fffffffffffffff is not an HTTP status code`},
		{"a zero block", rule("    block: 0\n"), `line 6: rule "r": block: want a positive duration such as 15m, got 0s`},
		{"a negative block", rule("    block: -1m\n"), `block: want a positive duration such as 15m, got -1m0s`},
		{"a bad block", rule("    block: soon\n"), `block: "soon" is not a duration`},
		{"count in the defaults", "defaults: {count: [401]}\n" + rule(""), `line 1: defaults: unknown field "count"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rules.Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant one containing %s", err, tt.want)
			}
			var e *rules.Error
			if !errors.As(err, &e) {
				t.Errorf("error %v is not a *rules.Error", err)
			}
		})
	}
}

// TestHandBuiltResponse: a Rule built by hand is checked as a parsed one is.
func TestHandBuiltResponse(t *testing.T) {
	c, err := rules.Parse([]byte("rules:\n  - {name: r, match: /, rate: 9, period: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	for _, tt := range []struct {
		name string
		edit func(*rules.Rule)
		want string
	}{
		{"a bad code", func(r *rules.Rule) { r.Count = []int{42} }, "count: 42 is not an HTTP status code"},
		{"a code twice", func(r *rules.Rule) { r.Count = []int{401, 401} }, "count: 401 given twice"},
		{"a negative block", func(r *rules.Rule) { r.Block = -1 }, "block: -1ns is negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Rules[0]
			tt.edit(&r)
			if _, err := c.Limiter(r, store); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Limiter = %v, want an error containing %s", err, tt.want)
			}
		})
	}
}

// TestCountAfterALaterRuleDenies: a request that reaches two rules (here
// /login, which a router that folds case may serve as /LOGIN) is counted
// by the first, which counts 429s, when the second denies it, as a chain
// of limiters' handlers would count it.
func TestCountAfterALaterRuleDenies(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - {name: counter, match: /login, rate: 1, period: 1h, count: 429}
  - {name: strict, match: /LOGIN, rate: 1, period: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(c, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	left := func() int {
		t.Helper()
		res, err := h.Limiter("counter").AllowN(context.Background(), "ip:192.0.2.1", 0)
		if err != nil {
			t.Fatal(err)
		}
		return res.Remaining
	}
	check(t, "served: a 404", do(h, 1, "GET", "/login", nil), 404)
	if n := left(); n != 1 {
		t.Fatalf("counter took a 404: %d left", n)
	}
	check(t, "strict denies", do(h, 1, "GET", "/login", nil), 429)
	if n := left(); n != 0 {
		t.Fatalf("counter did not count the 429: %d left", n)
	}
}

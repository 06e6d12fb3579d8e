package rules_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// do sends n requests to h and returns their status codes.
func do(h http.Handler, n int, method, path string, header map[string]string) []int {
	var out []int
	for range n {
		r := httptest.NewRequest(method, path, nil)
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		out = append(out, w.Code)
	}
	return out
}

func check(t *testing.T, what string, got []int, want ...int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
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
	check(t, "home", do(h, 3, "GET", "/", nil), 200, 200, 429)
	check(t, "unmatched paths pass", do(h, 5, "GET", "/other", nil), 200, 200, 200, 200, 200)
	check(t, "api per key, burst 1", do(h, 2, "GET", "/api/x", map[string]string{"X-API-Key": "k1"}), 200, 429)
	check(t, "api, another key", do(h, 1, "GET", "/api/x", map[string]string{"X-API-Key": "k2"}), 200)
	check(t, "api without a key: per IP", do(h, 2, "GET", "/api/x", nil), 200, 429)
	check(t, "export costs 5 of 10", do(h, 3, "POST", "/export", nil), 200, 200, 429)
	check(t, "GET /export is not the POST rule", do(h, 3, "GET", "/export", nil), 200, 200, 200)
	check(t, "items: one budget for the route", append(do(h, 1, "GET", "/items/1", nil), do(h, 1, "GET", "/items/2", nil)...), 200, 429)
	if served != 16 {
		t.Fatalf("next served %d requests, want the 16 that were admitted", served)
	}
}

// TestLimitsAllOrNothing: a per-key limit under a per-address ceiling; a
// request one limit denies takes nothing from the other.
func TestLimitsAllOrNothing(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - name: api
    match: /api/
    key: [header:X-API-Key, ip]
    headers: both
    problem_json: true
    limits:
      - {rate: 2, period: 1h}
      - {name: per-ip, rate: 3, period: 1h, key: ip}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := c.Handler(store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) map[string]string { return map[string]string{"X-API-Key": k} }
	check(t, "key a: its 2", do(h, 3, "GET", "/api/", key("a")), 404, 404, 429)
	check(t, "key b: the address has 1 left", do(h, 2, "GET", "/api/", key("b")), 404, 429)
	check(t, "key c: the address is spent", do(h, 1, "GET", "/api/", key("c")), 429)

	// Key a's denial took nothing from the address, and b's one pass did.
	r := httptest.NewRequest("GET", "/api/", nil)
	r.Header.Set("X-API-Key", "d")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 429 || w.Header().Get("Content-Type") != "application/problem+json" ||
		w.Header().Get("RateLimit-Policy") != `"api";q=2;w=3600, "per-ip";q=3;w=3600` {
		t.Fatalf("denial: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if body := w.Body.String(); !strings.Contains(body, `"violated-policies":["per-ip"]`) {
		t.Fatalf("problem body names the wrong policy: %s", body)
	}
}

// userOf is authentication in miniature: the user is the Authorization
// header's value.
func userOf(r *http.Request) (string, bool) {
	u := r.Header.Get("Authorization")
	return u, u != ""
}

func TestUserKey(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - {name: account, match: /account, key: user, rate: 1, period: 1h}
  - {name: search, match: /search, key: [user, ip], rate: 1, period: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	if _, err := rules.NewHandler(c, store, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), `rule "account": key user: no user function`) {
		t.Fatalf("a user rule without WithUser: %v", err)
	}
	h, err := rules.NewHandler(c, store, http.NotFoundHandler(), rules.WithUser(userOf))
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := map[string]string{"Authorization": "alice"}, map[string]string{"Authorization": "bob"}
	check(t, "alice", do(h, 2, "GET", "/account", alice), 404, 429)
	check(t, "bob has his own budget", do(h, 1, "GET", "/account", bob), 404)
	check(t, "no user: 401", do(h, 1, "GET", "/account", nil), 401)
	check(t, "no user, but the address is an alternative", do(h, 2, "GET", "/search", nil), 404, 429)
	check(t, "alice on search", do(h, 1, "GET", "/search", alice), 404)
}

// TestRuleSettings: each setting reaches the limiter.
func TestRuleSettings(t *testing.T) {
	c, err := rules.Parse([]byte(`
defaults: {dry_run: true, headers: none}
rules:
  - {name: dry, match: /dry, rate: 1, period: 1h}
  - {name: wet, match: /wet, rate: 1, period: 1h, dry_run: false, headers: ietf, problem_json: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := c.Handler(store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	check(t, "dry run refuses nobody", do(h, 3, "GET", "/dry", nil), 404, 404, 404)
	check(t, "the rule overrides it", do(h, 2, "GET", "/wet", nil), 404, 429)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/wet", nil))
	if w.Header().Get("RateLimit-Policy") == "" || w.Header().Get("X-RateLimit-Limit") != "" || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("headers: ietf and problem+json: %v", w.Header())
	}
	if d := h.(*rules.Handler).Limiter("dry").String(); d != "dry: 1 per 1h (dry run)" {
		t.Fatalf("dry limiter: %s", d)
	}
}

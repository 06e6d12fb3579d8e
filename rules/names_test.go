package rules_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestFirstLimitMayBeNamed: a name on the first of limits names the rule's
// limiter, in headers and in the store; unnamed, it is the rule's name.
func TestFirstLimitMayBeNamed(t *testing.T) {
	c, err := rules.Parse([]byte(`
defaults: {headers: ietf}
rules:
  - name: api
    match: "GET /api/"
    limits:
      - {name: api-burst, rate: 1, period: 1m}
      - {rate: 100, period: 1h}
  - name: home
    match: "GET /{$}"
    limits:
      - {rate: 1, period: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Rules[0].Limits[0].Name, c.Rules[0].Limits[1].Name, c.Rules[1].Limits[0].Name}; got[0] != "api-burst" || got[1] != "api-1h" || got[2] != "home" {
		t.Fatalf("limit names %q, want [api-burst api-1h home]", got)
	}
	mem := memory.New()
	defer mem.Close()
	h, err := c.Handler(mem, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/x", nil))
	if got := w.Header().Get("Ratelimit-Policy"); got != `"api-burst";q=1;w=60, "api-1h";q=100;w=3600` {
		t.Fatalf("RateLimit-Policy %q, want the first limit named api-burst", got)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if got := w.Header().Get("Ratelimit-Policy"); got != `"home";q=1;w=60` {
		t.Fatalf("RateLimit-Policy %q, want the rule's name", got)
	}
	// The limiter's keys live under the first limit's name.
	if res, err := mem.AllowN(t.Context(), "api-burst/ip:192.0.2.1", ratelimit.PerMinute(1), 0); err != nil || res.Remaining != 0 {
		t.Fatalf("api-burst/ip:192.0.2.1 has %d left (%v), want the request's take", res.Remaining, err)
	}
}

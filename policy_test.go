package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestPoliciesAreAllOrNothing(t *testing.T) {
	f := newFixture(t, ratelimit.PerSecond(2), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(3)}))
	a := req{remote: "192.0.2.1:1"}
	if got, want := f.codes(a, a, a), []int{200, 200, 429}; !equalInts(got, want) {
		t.Fatalf("within a second: %v, want %v (2 per second)", got, want)
	}
	f.clock.Add(time.Second)
	if got, want := f.codes(a, a), []int{200, 429}; !equalInts(got, want) {
		t.Fatalf("a second later: %v, want %v (the third of 3 per hour)", got, want)
	}
	// The hourly limit denied the last request: it must not have spent a
	// token of the per-second limit, which is full again a second later
	// and has 2 to report.
	f.clock.Add(time.Second)
	res, err := f.store.Store.AllowN(context.Background(), "api/ip:192.0.2.1", ratelimit.PerSecond(2), 0)
	if err != nil || res.Remaining != 2 {
		t.Fatalf("per-second budget after denials by the hourly limit: %+v, %v; want 2 left", res, err)
	}
}

// TestAddressCeilingOverMadeUpAPIKeys: an address that invents API keys
// (each with a budget of its own) still meets its per-address ceiling.
func TestAddressCeilingOverMadeUpAPIKeys(t *testing.T) {
	f := newFixture(t, ratelimit.PerMinute(10), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "per-ip", Limit: ratelimit.PerMinute(20), Key: ratelimit.KeyByIP()}))
	passed := 0
	for i := range 200 {
		if w := f.do(req{remote: "192.0.2.1:1", headers: map[string]string{"X-API-Key": fmt.Sprint("made-up-", i)}}); w.Code == 200 {
			passed++
		}
	}
	if passed != 20 {
		t.Fatalf("one address with 200 made-up API keys passed %d times, want the ceiling of 20", passed)
	}
	// Another address keeps its own ceiling, and a real key its own limit.
	if w := f.do(req{remote: "192.0.2.2:1", headers: map[string]string{"X-API-Key": "k"}}); w.Code != 200 {
		t.Fatalf("another address: %d, want 200", w.Code)
	}
}

func TestHeadersOfSeveralPolicies(t *testing.T) {
	f := newFixture(t, ratelimit.PerSecond(10).WithBurst(20), ratelimit.WithName("api"),
		ratelimit.WithHeaders(ratelimit.HeadersBoth), ratelimit.WithDenyHandler(ratelimit.ProblemJSON()),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(3)}))
	a := req{remote: "192.0.2.1:1"}
	w := f.do(a)
	h := w.Header()
	if got, want := h.Get("RateLimit-Policy"), `"api";q=20;w=2, "hourly";q=3;w=3600`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q (every policy; a bucket's q is its capacity, w its refill time)", got, want)
	}
	if got, want := h.Get("RateLimit"), `"hourly";r=2;t=1200`; got != want {
		t.Errorf("RateLimit %q, want %q (the policy closest to exhaustion)", got, want)
	}
	if got := h.Get("X-RateLimit-Limit") + "/" + h.Get("X-RateLimit-Remaining"); got != "3/2" {
		t.Errorf("X-RateLimit-Limit/Remaining %s, want 3/2 (the most constraining policy)", got)
	}
	f.do(a)
	f.do(a)
	w = f.do(a)
	if w.Code != 429 || w.Header().Get("Retry-After") != "1200" {
		t.Errorf("fourth request: %d, Retry-After %q; want 429 and the hourly wait, 1200", w.Code, w.Header().Get("Retry-After"))
	}
	if body := w.Body.String(); !strings.Contains(body, `"violated-policies":["hourly"]`) {
		t.Errorf("problem body %s, want exactly the denying policy", body)
	}
}

func TestBurstPolicyHeaderIsHonest(t *testing.T) {
	// r must never exceed q: q is the capacity, 20, not the rate, 10.
	f := newFixture(t, ratelimit.PerSecond(10).WithBurst(20), ratelimit.WithName("api"), ratelimit.WithHeaders(ratelimit.HeadersIETF))
	h := f.do(req{remote: "192.0.2.1:1"}).Header()
	if got, want := h.Get("RateLimit-Policy"), `"api";q=20;w=2`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got, want := h.Get("RateLimit"), `"api";r=19;t=1`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
}

func TestPolicyNamesAreChecked(t *testing.T) {
	store := memory.New()
	defer store.Close()
	for _, opts := range [][]ratelimit.Option{
		{ratelimit.WithPolicy(ratelimit.Policy{Name: "", Limit: ratelimit.PerHour(1)})},
		{ratelimit.WithPolicy(ratelimit.Policy{Name: "a/b", Limit: ratelimit.PerHour(1)})},
		{ratelimit.WithPolicy(ratelimit.Policy{Name: "h", Limit: ratelimit.Limit{}})},
		{ratelimit.WithPolicy(ratelimit.Policy{Name: "h", Limit: ratelimit.PerHour(1)}), ratelimit.WithPolicy(ratelimit.Policy{Name: "h", Limit: ratelimit.PerHour(2)})},
		{ratelimit.WithName("api"), ratelimit.WithPolicy(ratelimit.Policy{Name: "api", Limit: ratelimit.PerHour(1)})},
	} {
		if _, err := ratelimit.New(store, ratelimit.PerSecond(1), opts...); err == nil {
			t.Errorf("New accepted bad policies %d", len(opts))
		}
	}
}

// TestNamespacesNeverOverlap: a limiter named x-api-key keyed by address,
// and an unnamed limiter keyed by the X-API-Key header, share a store; a
// client sending the header "ip:192.0.2.9" must not spend that address's
// budget.
func TestNamespacesNeverOverlap(t *testing.T) {
	store := memory.New()
	defer store.Close()
	byIP := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithName("x-api-key"))(hello)
	byKey := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))(hello)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", "ip:192.0.2.9")
	byKey.ServeHTTP(httptest.NewRecorder(), r)
	victim := httptest.NewRequest(http.MethodGet, "/", nil)
	victim.RemoteAddr = "192.0.2.9:1"
	w := httptest.NewRecorder()
	byIP.ServeHTTP(w, victim)
	if w.Code != http.StatusOK {
		t.Fatalf("the address's first request got %d: another limiter's client spent its budget", w.Code)
	}
}

package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestDenialBody(t *testing.T) {
	a := req{remote: "203.0.113.1:1"}
	f := newFixture(t, ratelimit.PerHour(1))
	f.do(a)
	w := f.do(a)
	if w.Body.String() != "Too Many Requests\n" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("default denial: %q %q", w.Header().Get("Content-Type"), w.Body.String())
	}

	f = newFixture(t, ratelimit.PerHour(1), ratelimit.WithDenyHandler(ratelimit.ProblemJSON()), ratelimit.WithName("search"))
	f.do(a)
	w = f.do(a)
	want := `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"violated-policies":["search"]}` + "\n"
	if w.Code != limited || w.Header().Get("Content-Type") != "application/problem+json" || w.Body.String() != want {
		t.Fatalf("problem denial: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}

	custom := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(limited); w.Write([]byte("slow down")) })
	f = newFixture(t, ratelimit.PerHour(1), ratelimit.WithDenyHandler(custom))
	f.do(a)
	if w = f.do(a); w.Body.String() != "slow down" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("custom denial: %q, Retry-After %q", w.Body.String(), w.Header().Get("Retry-After"))
	}
}

// TestViolatedPoliciesNamePlansAsTheHeaderDoes: a denial by a policy with
// plans names it "policy.plan" in ViolatedPolicies and the problem+json
// body, as RateLimit-Policy does, so that a client can match the two.
func TestViolatedPoliciesNamePlansAsTheHeaderDoes(t *testing.T) {
	store := memory.New()
	defer store.Close()
	plans := ratelimit.Policy{Name: "api", Plans: []ratelimit.Plan{
		{Name: "free", Limit: ratelimit.PerHour(1)}, {Name: "pro", Limit: ratelimit.PerHour(100)}}}
	l, err := ratelimit.New(store, ratelimit.PerHour(1000), ratelimit.WithName("site"), ratelimit.WithPolicy(plans),
		ratelimit.WithHeaders(ratelimit.HeadersIETF), ratelimit.WithDenyHandler(ratelimit.ProblemJSON()))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(http.NotFoundHandler())
	var rec *httptest.ResponseRecorder
	for range 2 {
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), "free"))
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, r)
	}
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), `"violated-policies":["api.free"]`) ||
		!strings.Contains(rec.Header().Get("RateLimit-Policy"), `"api.free"`) {
		t.Fatalf("the second free request: %d %q, RateLimit-Policy %q; want both naming \"api.free\"",
			rec.Code, rec.Body.String(), rec.Header().Get("RateLimit-Policy"))
	}
}

package ratelimit_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
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

package rules_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// benchmarkHandler serves path through the sample rules, on a budget no
// request exhausts.
func benchmarkHandler(b *testing.B, path string) {
	benchmarkRules(b, path, "")
}

// benchmarkRules is benchmarkHandler with more fields for the api rule.
func benchmarkRules(b *testing.B, path, fields string) {
	c, err := rules.Parse([]byte(`
plans:
  free: {rate: 900000000, period: 1m}
  pro: {rate: 1000000000, period: 1m}
rules:
  - {name: api, match: "GET /api/", rate: 1000000000, period: 1s` + fields + `}
  - {name: login, match: "POST /v1/login", rate: 1000000000, period: 1s}
`))
	if err != nil {
		b.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(c, store, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", path, nil)
	r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), "pro"))
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// BenchmarkHandler is a clean path: one reading, one rule.
func BenchmarkHandler(b *testing.B) { benchmarkHandler(b, "/api/items") }

// BenchmarkHandlerEscapedPath is a path with an escape: every reading.
func BenchmarkHandlerEscapedPath(b *testing.B) { benchmarkHandler(b, "/api/a%2Fb") }

// BenchmarkHandlerCounting is BenchmarkHandler on a rule that counts only
// some responses, of a response it does not count: a report before, the
// status recorded.
func BenchmarkHandlerCounting(b *testing.B) { benchmarkRules(b, "/api/items", ", count: [401, 403]") }

// BenchmarkHandlerPlans is BenchmarkHandler on a rule with plans: two
// policies, the second the request's plan's.
func BenchmarkHandlerPlans(b *testing.B) { benchmarkRules(b, "/api/items", ", plans: [free, pro]") }

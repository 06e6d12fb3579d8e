package rules_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

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
	c, err := rules.Parse([]byte(`
rules:
  - {name: api, match: "GET /api/", rate: 1000000000, period: 1s}
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

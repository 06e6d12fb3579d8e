package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

var noop = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })

// headerWriter is a minimal ResponseWriter, reused between requests so that
// the benchmarks measure the middleware, not the recorder.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerWriter) WriteHeader(int)             {}

func serve(b *testing.B, h http.Handler) {
	r := httptest.NewRequest("GET", "/", nil)
	w := &headerWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// BenchmarkBareHandler is the baseline of BenchmarkMiddleware.
func BenchmarkBareHandler(b *testing.B) { serve(b, noop) }

// BenchmarkMiddleware is a no-op handler behind the limiter, keyed by IP,
// on the memory store; every request is allowed.
func BenchmarkMiddleware(b *testing.B) {
	store := memory.New()
	defer store.Close()
	serve(b, ratelimit.Middleware(store, ratelimit.PerSecond(1e9))(noop))
}

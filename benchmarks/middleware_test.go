package benchmarks

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// httpBudget admits every request of a run, with header values of the
// usual width.
var httpBudget = Budget{Rate: 1_000_000_000, Period: time.Hour}

// serve runs GET / through h from one client address, reusing the request
// and a minimal ResponseWriter, so that only the middleware's own work is
// measured. A response other than 200 fails the benchmark.
func serve(b *testing.B, h http.Handler, closeFn func()) {
	b.Helper()
	b.Cleanup(closeFn)
	r := httptest.NewRequest("GET", "/", nil) // RemoteAddr 192.0.2.1:1234
	w := &Writer{H: http.Header{}}
	h.ServeHTTP(w, r)
	settle()
	var denied int64
	b.ReportAllocs()
	for b.Loop() {
		clear(w.H)
		w.Status = 0
		h.ServeHTTP(w, r)
		if w.Status != http.StatusOK {
			denied++
		}
	}
	checkDenied(b, denied)
}

// BenchmarkMiddleware is net/http: a no-op handler behind each library's
// middleware, keyed by client address, rate-limit headers on; lib=bare is
// the handler alone. Overhead is a library's ns/op less bare's.
func BenchmarkMiddleware(b *testing.B) {
	for _, name := range rotated(HTTPNames) {
		b.Run("lib="+name, func(b *testing.B) {
			h, closeFn, err := NewHTTP(name, httpBudget, Noop)
			if err != nil {
				b.Fatal(err)
			}
			serve(b, h, closeFn)
		})
	}
}

// BenchmarkGin is a Gin engine with a no-op route behind adapters/gin and
// behind ulule/limiter's Gin middleware; lib=bare has no limiter.
func BenchmarkGin(b *testing.B) {
	for _, name := range rotated(GinNames) {
		b.Run("lib="+name, func(b *testing.B) {
			h, closeFn, err := NewGin(name, httpBudget)
			if err != nil {
				b.Fatal(err)
			}
			serve(b, h, closeFn)
		})
	}
}

// BenchmarkEcho is an Echo v4 server with a no-op route behind
// adapters/echo and behind Echo's own middleware.RateLimiter (on its
// memory store, and on ours through the RateLimiterStore bridge); lib=bare
// has no limiter.
func BenchmarkEcho(b *testing.B) {
	for _, name := range rotated(EchoNames) {
		b.Run("lib="+name, func(b *testing.B) {
			h, closeFn, err := NewEcho(name, httpBudget)
			if err != nil {
				b.Fatal(err)
			}
			serve(b, h, closeFn)
		})
	}
}

package ratelimit_test

import (
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// BenchmarkMiddlewareAPIKey is BenchmarkMiddleware keyed by an API key
// header, whose store key is a keyed hash: a returning client's is cached.
func BenchmarkMiddlewareAPIKey(b *testing.B) {
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	defer store.Close()
	h := ratelimit.Middleware(store, ratelimit.PerMinute(60), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))(noop)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", "sk-live-0123456789abcdef")
	w := &headerWriter{h: map[string][]string{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// BenchmarkMiddlewareNewAPIKeys is BenchmarkMiddlewareAPIKey with a new
// key per request: the cost of hashing a key the limiter has not seen.
func BenchmarkMiddlewareNewAPIKeys(b *testing.B) {
	store := memory.New()
	defer store.Close()
	h := ratelimit.Middleware(store, ratelimit.PerMinute(60), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))(noop)
	r := httptest.NewRequest("GET", "/", nil)
	w := &headerWriter{h: map[string][]string{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r.Header["X-Api-Key"] = []string{"sk-live-" + strconv.Itoa(i)}
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

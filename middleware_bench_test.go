package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

var noop = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })

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
// on the memory store, at 60 per minute with a clock that moves a second
// per request: every request is allowed, with realistic header values.
func BenchmarkMiddleware(b *testing.B) {
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	defer store.Close()
	serve(b, ratelimit.Middleware(store, ratelimit.PerMinute(60))(noop))
}

// BenchmarkMiddlewareIETF is BenchmarkMiddleware with both header styles.
func BenchmarkMiddlewareIETF(b *testing.B) {
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	defer store.Close()
	serve(b, ratelimit.Middleware(store, ratelimit.PerMinute(60), ratelimit.WithHeaders(ratelimit.HeadersBoth))(noop))
}

// BenchmarkMiddlewareTwoPolicies is BenchmarkMiddleware with a second
// policy, decided with the first in one call to the store.
func BenchmarkMiddlewareTwoPolicies(b *testing.B) {
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	defer store.Close()
	serve(b, ratelimit.Middleware(store, ratelimit.PerMinute(60), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(3600)}))(noop))
}

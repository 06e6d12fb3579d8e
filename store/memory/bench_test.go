package memory_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// BenchmarkXTimeRate is the baseline of BenchmarkHotKey: one
// golang.org/x/time/rate Limiter, reading the clock on each call as a store
// does.
func BenchmarkXTimeRate(b *testing.B) {
	lim := rate.NewLimiter(1e9, 1e9)
	b.ReportAllocs()
	for b.Loop() {
		lim.AllowN(time.Now(), 1)
	}
}

// BenchmarkHotKey is AllowN on one existing key; it must not allocate.
func BenchmarkHotKey(b *testing.B) {
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	s.AllowN(ctx, "hot", l, 1)
	b.ReportAllocs()
	for b.Loop() {
		s.AllowN(ctx, "hot", l, 1)
	}
}

// BenchmarkHotKeyVsXTimeRate is BenchmarkHotKey against BenchmarkXTimeRate
// in one run: the two loops take turns in slices of 1,000 calls, so that a
// noisy machine slows both alike, and the ratio of their times is reported
// (below 1: the store is faster than x/time/rate with time.Now).
func BenchmarkHotKeyVsXTimeRate(b *testing.B) {
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	s.AllowN(ctx, "hot", l, 1)
	lim := rate.NewLimiter(1e9, 1e9)
	const slice = 1000
	var store, ref time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range slice {
			lim.AllowN(time.Now(), 1)
		}
		t1 := time.Now()
		for range slice {
			s.AllowN(ctx, "hot", l, 1)
		}
		ref, store = ref+t1.Sub(t0), store+time.Since(t1)
	}
	calls := float64(b.N) * slice
	b.ReportMetric(float64(store)/calls, "store-ns/call")
	b.ReportMetric(float64(ref)/calls, "xrate-ns/call")
	b.ReportMetric(float64(store)/float64(ref), "store/xrate")
}

// BenchmarkManyKeysParallel is AllowN on 100,000 existing keys from every core.
func BenchmarkManyKeysParallel(b *testing.B) {
	const keys = 100_000
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	names := make([]string, keys)
	for i := range names {
		names[i] = "client-" + strconv.Itoa(i)
		s.AllowN(ctx, names[i], l, 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.AllowN(ctx, names[i%keys], l, 1)
			i += 7919
		}
	})
}

// BenchmarkBytesPerKey reports the heap a key costs, at several key counts:
// the table's load moves between 13/20 and 13/16 as it grows.
func BenchmarkBytesPerKey(b *testing.B) {
	for _, keys := range []int{100_000, 300_000, 1_000_000} {
		b.Run(strconv.Itoa(keys), func(b *testing.B) {
			names := make([]string, keys)
			for i := range names {
				names[i] = "client-" + strconv.Itoa(i)
			}
			ctx, l := context.Background(), ratelimit.PerSecond(100)
			var perKey float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(0)) // what a key costs, not eviction
				for _, k := range names {
					s.AllowN(ctx, k, l, 1)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perKey = float64(after.HeapAlloc-before.HeapAlloc) / float64(keys)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

// BenchmarkAllowAll is AllowAll with two limits of one client (the keys the
// limiter builds for two limits) against AllowN with one, on existing keys;
// neither may allocate.
func BenchmarkAllowAll(b *testing.B) {
	s := memory.New()
	defer s.Close()
	ctx := context.Background()
	takes := []ratelimit.Take{
		{Key: "api/ip:192.0.2.1", Limit: ratelimit.PerSecond(1e9), N: 1},
		{Key: "api#hourly/ip:192.0.2.1", Limit: ratelimit.PerHour(1e9), N: 1},
	}
	results := make([]ratelimit.Result, len(takes))
	s.AllowAll(ctx, takes, results)
	b.Run("AllowN/1 limit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.AllowN(ctx, takes[0].Key, takes[0].Limit, 1)
		}
	})
	b.Run("AllowAll/2 limits", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.AllowAll(ctx, takes, results)
		}
	})
}

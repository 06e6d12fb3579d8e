package ratelimit_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// costKeys is the number of keys BenchmarkCostMemory visits: far more than
// the limiter's key cache holds, so that most keys are new to it.
const costKeys = 100_000

// BenchmarkCostMemory sets a Limiter's Allow beside its store's own AllowN,
// on the memory store, over 100,000 arbitrary keys (user names, not
// addresses) visited round-robin: what the Limiter adds to a decision of
// an in-process store. Run the two interleaved (-count) and compare.
func BenchmarkCostMemory(b *testing.B) {
	limit := ratelimit.PerHour(1_000_000)
	keys := make([]string, costKeys)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i*7919)
	}
	ctx := context.Background()
	b.Run("via=store", func(b *testing.B) {
		store := memory.New()
		defer store.Close()
		full := make([]string, len(keys)) // the keys as the Limiter would store them
		for i, k := range keys {
			full[i] = "bench/" + k
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if res, err := store.AllowN(ctx, full[i], limit, 1); err != nil || !res.Allowed {
				b.Fatalf("%+v %v", res, err)
			}
			if i++; i == len(full) {
				i = 0
			}
		}
	})
	b.Run("via=limiter", func(b *testing.B) {
		store := memory.New()
		defer store.Close()
		l, err := ratelimit.New(store, limit, ratelimit.WithName("bench"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if res, err := l.Allow(ctx, keys[i]); err != nil || !res.Allowed {
				b.Fatalf("%+v %v", res, err)
			}
			if i++; i == len(keys) {
				i = 0
			}
		}
	})
}

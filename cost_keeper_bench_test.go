package ratelimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// instantKeeper is a shared store that keeps its deadlines and answers at
// once, allowing every take: a Redis store with no Redis, so that a
// benchmark sees what a Limiter adds to a decision rather than the round
// trip.
type instantKeeper struct{}

func (instantKeeper) AllowN(ctx context.Context, _ string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if _, ok := ctx.Deadline(); !ok { // what a deadline-keeping store reads
		return ratelimit.Result{}, context.DeadlineExceeded
	}
	return ratelimit.Result{Allowed: true, Limit: l, Remaining: l.Capacity() - n}, nil
}

func (instantKeeper) KeepsDeadlines() bool { return true }

// BenchmarkCostKeeper is a Limiter's Allow over a shared store that keeps
// its deadlines and answers at once, beside the store's own AllowN with a
// deadline: the Limiter's own CPU per decision on the path it takes to
// store/redis, without Redis's noise. 10,000 keys round-robin, as the
// Redis Limiter-cost rows of benchmarks/; run with -cpu 1,2.
func BenchmarkCostKeeper(b *testing.B) {
	limit := ratelimit.PerSecond(1_000_000)
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	far, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.Run("via=store", func(b *testing.B) {
		var s instantKeeper
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if res, err := s.AllowN(far, "bench/"+keys[i], limit, 1); err != nil || !res.Allowed {
					b.Errorf("%+v %v", res, err)
					return
				}
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
	})
	b.Run("via=limiter", func(b *testing.B) {
		l, err := ratelimit.New(instantKeeper{}, limit, ratelimit.WithName("bench"), ratelimit.WithPlainKeys(),
			ratelimit.WithTimeout(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if res, err := l.Allow(ctx, keys[i]); err != nil || !res.Allowed {
					b.Errorf("%+v %v", res, err)
					return
				}
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
	})
}

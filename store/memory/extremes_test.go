package memory

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestExtremeLimits spends the whole budget of the most extreme valid
// limits, with the clock in 2026 and in 2200 (when now plus a 100-year
// period is past the int64 range of Unix nanoseconds), and checks that
// every result is sane: Remaining from 0 to the capacity, durations from
// 0 to twice MaxPeriod, never wrapped; and that the exhausted key stays
// exhausted (a second full budget is denied) through a sweep and through
// eviction.
func TestExtremeLimits(t *testing.T) {
	const (
		maxRate   = ratelimit.MaxRate
		maxPeriod = ratelimit.MaxPeriod
	)
	// The longest period over which a bucket of MaxRate tokens refilled at
	// 1 a period still fills within MaxPeriod.
	slowest := (maxPeriod / maxRate).Truncate(time.Millisecond)
	limits := []ratelimit.Limit{
		{Rate: maxRate, Period: maxPeriod},
		{Rate: 1, Period: maxPeriod},
		{Rate: maxRate, Period: ratelimit.MinPeriod},
		{Rate: 1, Period: ratelimit.MinPeriod},
		{Rate: 1, Period: slowest, Burst: maxRate},
		{Rate: maxRate, Period: maxPeriod, Burst: 1},
		{Rate: maxRate, Period: maxPeriod, Algorithm: ratelimit.FixedWindow},
		{Rate: 1, Period: maxPeriod, Algorithm: ratelimit.FixedWindow},
		{Rate: maxRate, Period: ratelimit.MinPeriod, Algorithm: ratelimit.FixedWindow},
		{Rate: maxRate, Period: maxPeriod, Algorithm: ratelimit.SlidingWindow},
		{Rate: 1, Period: maxPeriod, Algorithm: ratelimit.SlidingWindow},
		{Rate: maxRate, Period: ratelimit.MinPeriod, Algorithm: ratelimit.SlidingWindow},
		{Rate: ratelimit.MaxSlidingLogRate, Period: maxPeriod, Algorithm: ratelimit.SlidingLog},
		{Rate: 1, Period: maxPeriod, Algorithm: ratelimit.SlidingLog},
		{Rate: ratelimit.MaxSlidingLogRate, Period: ratelimit.MinPeriod, Algorithm: ratelimit.SlidingLog},
	}
	for _, year := range []int{2026, 2200} {
		for _, l := range limits {
			if err := l.Validate(); err != nil {
				t.Fatalf("%v: %v", l, err)
			}
			t.Run(l.String()+" in "+strconv.Itoa(year), func(t *testing.T) {
				now := time.Date(year, 6, 1, 12, 0, 0, 0, time.UTC)
				// 256 shards of two keys each.
				s := New(WithClock(func() time.Time { return now }), WithMaxKeys(512), WithSweepInterval(0))
				defer s.Close()
				ctx := context.Background()
				capacity := l.Capacity()
				allow := func(key string, n int) ratelimit.Result {
					t.Helper()
					res, err := s.AllowN(ctx, key, l, n)
					if err != nil {
						t.Fatal(err)
					}
					if res.Remaining < 0 || res.Remaining > capacity {
						t.Fatalf("%s: Remaining = %d, want 0 to %d", key, res.Remaining, capacity)
					}
					for _, d := range []time.Duration{res.RetryAfter, res.ResetAfter} {
						if d < 0 || d > 2*maxPeriod {
							t.Fatalf("%s: %+v: a duration outside 0 to %v", key, res, 2*maxPeriod)
						}
					}
					return res
				}
				if res := allow("spent", capacity); !res.Allowed || res.Remaining != 0 || res.ResetAfter <= 0 {
					t.Fatalf("spending the whole budget: %+v", res)
				}
				denied := func(when string) {
					t.Helper()
					if res := allow("spent", capacity); res.Allowed || res.RetryAfter <= 0 {
						t.Fatalf("%s: the spent key got a request through: %+v", when, res)
					}
				}
				denied("at once")
				for i := range s.shards {
					s.shards[i].sweep(s.now())
				}
				if n := s.Len(); n != 1 {
					t.Fatalf("a sweep left %d keys, want the spent one", n)
				}
				denied("after a sweep")
				// As many new keys in the spent key's shard as it holds, each
				// using a small share of a gentler limit: one key must go, and
				// it must not be the spent one.
				shard := s.hash("spent", l.Algorithm) >> s.shift
				bound := s.shards[shard].max
				added := 0
				for i := 0; added < bound; i++ {
					key := "new-" + strconv.Itoa(i)
					if s.hash(key, l.Algorithm)>>s.shift == shard {
						gentle := ratelimit.Limit{Rate: 1000, Period: time.Hour, Algorithm: l.Algorithm}
						if _, err := s.AllowN(ctx, key, gentle, 1); err != nil {
							t.Fatal(err)
						}
						added++
					}
				}
				if n := s.shards[shard].cells.used; n != bound {
					t.Fatalf("the shard holds %d keys, bound %d", n, bound)
				}
				denied("after eviction")
			})
		}
	}
}

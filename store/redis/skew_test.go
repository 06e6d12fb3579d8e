package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestAppClocksApartKeepTheBudget: two app servers whose clocks
// (WithAppClock) are apart, taking turns on one key while their clocks
// stand still, admit the budget and at most what the clocks' difference
// refills once: a bucket decided as of its last update when a clock is
// behind it, a window decided in the next one when a clock a little ahead
// opened it. Each turn refilled the bucket by the difference (every
// request of PerSecond(5) passed with clocks 400 ms apart), and each
// server counted the window the other had closed afresh.
func TestAppClocksApartKeepTheBudget(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers(t) {
		for _, c := range []struct {
			name  string
			limit ratelimit.Limit
			skew  time.Duration
			at    time.Duration // the ahead clock's time into a second (a day, for a calendar)
			most  int
		}{
			// a day's quota at midnight: each server's own day, but for the
			// count the clock ahead began (at most a day's budget more)
			{"calendar day", ratelimit.PerDay(3, time.UTC), 300 * time.Millisecond, 100 * time.Millisecond, 6},
			{"token bucket", ratelimit.PerSecond(5), 400 * time.Millisecond, 500 * time.Millisecond, 5 + 2},
			{"fixed window", ratelimit.PerSecond(5).WithAlgorithm(ratelimit.FixedWindow), 100 * time.Millisecond, 50 * time.Millisecond, 5},
			{"sliding window", ratelimit.PerSecond(5).WithAlgorithm(ratelimit.SlidingWindow), 100 * time.Millisecond, 50 * time.Millisecond, 5},
			// windows shorter than the clocks' difference: the clock ahead is
			// windows on, not one
			{"short fixed window", ratelimit.Limit{Rate: 3, Period: 100 * time.Millisecond, Algorithm: ratelimit.FixedWindow}, 400 * time.Millisecond, 50 * time.Millisecond, 3},
			{"short sliding window", ratelimit.Limit{Rate: 3, Period: 100 * time.Millisecond, Algorithm: ratelimit.SlidingWindow}, 400 * time.Millisecond, 50 * time.Millisecond, 3},
		} {
			t.Run(srv.name+"/"+c.name, func(t *testing.T) {
				client := srv.client(t)
				second := time.Now().Truncate(time.Second).Add(time.Minute)
				if c.limit.Calendar != ratelimit.NoCalendar {
					second = time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour) // midnight
				}
				ahead, behind := &appClock{}, &appClock{}
				ahead.Set(second.Add(c.at))
				behind.Set(second.Add(c.at - c.skew))
				p := prefix(t)
				stores := []*redisstore.Store{
					redisstore.New(client, redisstore.WithPrefix(p), redisstore.WithAppClock(ahead.Now)),
					redisstore.New(client, redisstore.WithPrefix(p), redisstore.WithAppClock(behind.Now)),
				}
				admitted := 0
				for i := range 100 {
					res, err := stores[i%2].AllowN(ctx, "k", c.limit, 1)
					if err != nil {
						t.Fatal(err)
					}
					if res.Allowed {
						admitted++
					}
				}
				if admitted < c.limit.Rate || admitted > c.most {
					t.Fatalf("clocks %v apart admitted %d of 100 turns, want %d to %d", c.skew, admitted, c.limit.Rate, c.most)
				}
			})
		}
	}
}

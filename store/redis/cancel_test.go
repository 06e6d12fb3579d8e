package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	goredis "github.com/redis/go-redis/v9"
)

// TestCancelledWaitsFreeTheBudget: 100 Waits (1,000 with
// RATELIMIT_SLOW_TESTS) booked at once on Redis and cancelled while they
// wait give every token back (one refund each): the key's budget is free
// again at once, not booked for hours. The limit refills a token a
// minute, so that no token comes back while a loaded machine is still
// starting the waiters: a waiter that found one would not book, and the
// waiters would never all be cancelled.
func TestCancelledWaitsFreeTheBudget(t *testing.T) {
	srvs := servers(t)
	// miniredis runs Lua in the test process: under the race detector on a
	// busy machine, 1,000 refunds at once wait for one of the pool's
	// connections longer than go-redis's default pool timeout (4 s).
	srvs[0].client = func(t *testing.T) goredis.UniversalClient {
		mr := miniredis.RunT(t)
		c := goredis.NewClient(&goredis.Options{Addr: mr.Addr(), PoolTimeout: 30 * time.Second})
		t.Cleanup(func() { c.Close() })
		return c
	}
	for _, s := range srvs {
		t.Run(s.name, func(t *testing.T) {
			waiters := int64(100)
			if slowTests() {
				waiters = 1000
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var booked atomic.Int64
			l, err := ratelimit.New(redisstore.New(s.client(t), redisstore.WithPrefix(prefix(t))), ratelimit.PerHour(60),
				ratelimit.WithPlainKeys(), ratelimit.WithTimeout(time.Minute), ratelimit.WithObserver(ratelimit.Observer{
					Decision: func(d ratelimit.Decision) {
						if d.Delay > 0 && booked.Add(1) == waiters {
							cancel() // every waiter has booked: they all give up
						}
					}}))
			if err != nil {
				t.Fatal(err)
			}
			// One token a minute: the first waiter waits a minute, far longer
			// than it takes every waiter to book, however busy the machine.
			for range 60 { // the budget spent
				if err := l.Wait(context.Background(), "k"); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for range waiters {
				wg.Go(func() {
					if err := l.Wait(ctx, "k"); err == nil {
						t.Error("a cancelled Wait succeeded")
					}
				})
			}
			wg.Wait()
			res, err := l.AllowN(context.Background(), "k", 0)
			if err != nil || res.ResetAfter > 61*time.Minute {
				t.Fatalf("after %d cancelled waits: %+v, %v; want the bucket full again within its hour", waiters, res, err)
			}
		})
	}
}

package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestCancelledWaitsFreeTheBudget: 100 Waits (1,000 with
// RATELIMIT_SLOW_TESTS) booked at once on Redis and cancelled while they
// wait give every token back (one refund each): the key's budget is free
// again at once, not booked for hours. A thousand at once on miniredis
// under -race on a busy machine wait out the client's pool timeout. The
// limit refills a token a minute, so that no token comes back while a
// loaded machine is still starting the waiters: a waiter that found one
// would not book, and the waiters would never all be cancelled.
func TestCancelledWaitsFreeTheBudget(t *testing.T) {
	for _, s := range servers(t) {
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

package redisstore_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestAFlappingRedisDoesNotGiveTwoBudgets: redis-server stopped and
// continued every 300 ms under load, three app servers with fallbacks on
// one key and a breaker that follows the flaps closely (25 ms budget, 50 ms
// cool-down): the fleet's admissions stay within what the limit allows
// over the run plus one capacity from the shares, since what the fallbacks
// admitted is charged to Redis once it answers. (Before, the fleet took
// Redis's budget and the fallbacks' in turn: about 180 where this allows
// 124.)
func TestAFlappingRedisDoesNotGiveTwoBudgets(t *testing.T) {
	p := startRedis(t)
	client := goredis.NewClient(&goredis.Options{Addr: p.Addr()})
	defer client.Close()
	limit := ratelimit.PerSecond(20)
	const instances = 3
	fleet := make([]*ratelimit.Limiter, instances)
	for i := range fleet {
		local := memory.New()
		defer local.Close()
		var err error
		fleet[i], err = ratelimit.New(redisstore.New(client), limit, ratelimit.WithName("flap"),
			ratelimit.WithFallback(local, instances), ratelimit.WithTimeout(25*time.Millisecond),
			ratelimit.WithBreaker(ratelimit.NewBreaker(2, 50*time.Millisecond)), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
	}
	const run = 4 * time.Second
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := range 12 {
		wg.Go(func() {
			l := fleet[g%instances]
			for time.Since(start) < run {
				if res, _ := l.Allow(context.Background(), "hot"); res.Allowed {
					admitted.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	stopped := false
	for time.Since(start) < run {
		time.Sleep(300 * time.Millisecond)
		if stopped {
			p.Cont()
		} else {
			p.Stop()
		}
		stopped = !stopped
	}
	if stopped {
		p.Cont()
	}
	wg.Wait()
	elapsed := time.Since(start)
	most := int64(limit.Capacity()) + int64(elapsed.Seconds()*limit.PerSecondRate()) + int64(limit.Capacity())
	if got := admitted.Load(); got > most {
		t.Errorf("the fleet admitted %d on a flapping Redis in %v, want at most %d (the limit's budget and one capacity of shares)", got, elapsed.Round(time.Millisecond), most)
	}
	t.Logf("admitted %d in %v (bound %d)", admitted.Load(), elapsed.Round(time.Millisecond), most)
}

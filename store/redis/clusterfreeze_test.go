package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestClusterMasterFrozenKeepsTheOthersDeciding: one master of three is
// frozen (SIGSTOP, for less than the Cluster's node timeout) under load
// from 9 goroutines, 3 deciding a key of each master (requests that do not
// wait for each other, as a server's). The limiter's breaker stays closed
// (the other masters answer: the store fails in part), every decision of the other
// masters' keys is Redis's (but for a rare late read on a loaded machine),
// and the frozen master's decisions pay the time
// budget only while the calls in flight to it are young: then they are
// refused at once (its silence is longer than they can wait) and the
// fallback answers them.
func TestClusterMasterFrozenKeepsTheOthersDeciding(t *testing.T) {
	pc := startCluster(t)
	for _, addr := range pc.addrs { // a freeze well within the node timeout, on a loaded machine too
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		err := c.ConfigSet(context.Background(), "cluster-node-timeout", "5000").Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	cc := pc.client(t)
	var freezing atomic.Bool
	var opened, othersElsewhere, othersDecided atomic.Int64
	const budget = 250 * time.Millisecond
	l, err := ratelimit.New(redisstore.New(cc), ratelimit.PerMinute(1_000_000), ratelimit.WithName("freeze"), ratelimit.WithPlainKeys(),
		ratelimit.WithTimeout(budget),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}),
		ratelimit.WithObserver(ratelimit.Observer{
			BreakerChange: func(_ string, s ratelimit.BreakerState) {
				if s == ratelimit.BreakerOpen && freezing.Load() {
					opened.Add(1)
				}
			},
		}))
	if err != nil {
		t.Fatal(err)
	}
	// A key of master 0 (to freeze) and one of each other master.
	keyOf := map[int]string{}
	for i := 0; len(keyOf) < 3; i++ {
		k := fmt.Sprint("k", i)
		if m := pc.master(t, cc, redisstore.New(cc).Key("freeze/"+k, ratelimit.TokenBucket)); keyOf[m] == "" {
			keyOf[m] = k
		}
	}
	ctx := context.Background()
	for _, k := range keyOf { // routes and scripts ready: the first calls dial and load
		var err error
		for range 20 {
			if _, err = l.Allow(ctx, k); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const goroutines = 9
	var slow, frozenDecisions atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			m := g % 3
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				res, err := l.Allow(ctx, keyOf[m])
				took := time.Since(start)
				if !freezing.Load() {
					continue
				}
				if m == 0 {
					frozenDecisions.Add(1)
					if took >= budget*9/10 {
						slow.Add(1)
					}
					continue
				}
				othersDecided.Add(1)
				if err != nil || !res.Allowed {
					othersElsewhere.Add(1)
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // load before the freeze
	freezing.Store(true)
	pc.procs[0].Stop()
	time.Sleep(6 * budget) // the freeze: below the Cluster's node timeout
	freezing.Store(false)
	pc.procs[0].Cont()
	close(stop)
	wg.Wait()
	t.Logf("during a freeze of 6 budgets: %d decisions of the frozen master's key, %d of them slow (about the budget); %d of the others' keys, %d not decided by Redis; breaker opened %d times",
		frozenDecisions.Load(), slow.Load(), othersDecided.Load(), othersElsewhere.Load(), opened.Load())
	if opened.Load() != 0 {
		t.Errorf("the breaker opened %d times while two masters of three answered", opened.Load())
	}
	// a loaded machine may read a rare answer after its budget; an open
	// breaker would send them all elsewhere
	if othersElsewhere.Load() > othersDecided.Load()/100 {
		t.Errorf("%d of %d decisions of the answering masters' keys were not Redis's, want at most 1%%", othersElsewhere.Load(), othersDecided.Load())
	}
	if s := slow.Load(); s > 4*goroutines/3 {
		t.Errorf("%d decisions of the frozen master's key paid the budget, want at most %d: once its silence outlasts what a decision can wait, it is refused at once", s, 4*goroutines/3)
	}
}

package redisstore_test

import (
	"context"
	"errors"
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

// slowRedis adds d to every command's round trip, as a busy or distant
// Redis does.
type slowRedis struct{ d time.Duration }

func (slowRedis) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h slowRedis) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		<-time.After(h.d) // latency on the wire, whatever the caller's context
		return next(ctx, cmd)
	}
}

func (h slowRedis) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		<-time.After(h.d)
		return next(ctx, cmds)
	}
}

// TestFloodOfFreshKeysKeepsLimits: Redis answers in 50 ms and a flood of
// fresh keys queues more decisions than the group commit sends within the
// 100 ms budget. The decisions that wait past their budget are shed (never
// sent, answered by the local fallback), and a client limited to 20 gets
// at most its limit and one capacity of the fallback (20 + 20), never the
// 101 of 101 a limiter failing open gives. Whether the breaker opens
// depends on the machine (a sent call that a starved process reads late
// counts against the store): TestShedDecisionsDoNotOpenTheBreaker in the
// root package shows that shedding alone does not open it.
func TestFloodOfFreshKeysKeepsLimits(t *testing.T) {
	_, client := newMini(t)
	limit := ratelimit.PerHour(20) // no refill within the test: the count is exact
	rec, ta := &recordingStore{inner: redisstore.New(client)}, &tally{}
	var shed, late, open atomic.Int64
	l := faultLimiter(t, rec, limit, ta, ratelimit.WithErrorHandler(func(_ *http.Request, err error) {
		switch {
		case errors.Is(err, ratelimit.ErrBreakerOpen):
			open.Add(1)
		case errors.Is(err, ratelimit.ErrNotSent):
			shed.Add(1)
		case errors.Is(err, ratelimit.ErrTimeout):
			late.Add(1)
		}
	}))
	h := l.Handler(okHandler)
	// Load the scripts (one decision, a batch) while Redis is fast: a slow
	// Redis would spend two round trips, NOSCRIPT then EVAL, on each.
	var warm sync.WaitGroup
	for i := range 200 {
		warm.Go(func() { request(h, fmt.Sprint("warm-", i), -1) })
	}
	warm.Wait()
	client.AddHook(slowRedis{50 * time.Millisecond})

	const flooders, victimRequests = 200, 101
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for g := range flooders {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				request(h, fmt.Sprint("flood-", g, "-", i), -1)
				<-time.After(5 * time.Millisecond) // a flooder's pace
			}
		})
	}
	admitted := 0
	for range victimRequests {
		if request(h, "victim", -1) == http.StatusOK {
			admitted++
		}
		<-time.After(15 * time.Millisecond) // the victim's pace through the flood
	}
	stop()
	wg.Wait()
	rec.wait(t)
	t.Logf("victim: %d of %d admitted; decisions %v; %d shed, %d sent and not answered in time, %d behind the open breaker",
		admitted, victimRequests, ta, shed.Load(), late.Load(), open.Load())
	if shed.Load() == 0 {
		t.Fatal("no decision was shed: the flood did not overload the store, the test shows nothing")
	}
	if bound := 2 * limit.Capacity(); admitted > bound {
		t.Errorf("the limited client got %d of %d through the flood, want at most %d (its limit and the fallback's capacity)", admitted, victimRequests, bound)
	}
}

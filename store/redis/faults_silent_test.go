package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestFaultSilentRedisRefusesAtOnce freezes Redis (SIGSTOP) with every
// call the store keeps in flight hanging on it. A decision that Redis
// could answer in time only by answering at once, having been silent for
// longer, is refused at once with ErrNotSent (a limiter answers it by its
// failure policy, and counts it against its breaker only while no other
// call is answered: on Redis Cluster, a master frozen while the others
// answer costs its calls in flight their budget, the rest nothing); one
// that can wait longer than Redis has been silent is queued, and answered
// once Redis is back.
func TestFaultSilentRedisRefusesAtOnce(t *testing.T) {
	p := startRedis(t)
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, ReadTimeout: 10 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	store := redisstore.New(c)
	l := ratelimit.PerMinute(1000)
	if _, err := store.AllowN(context.Background(), "warm", l, 1); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	thawed := false
	defer func() {
		if !thawed {
			p.Cont()
		}
	}()
	var wg sync.WaitGroup
	hung := make([]error, 8)
	for i := range hung { // more than the calls the store keeps in flight
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			_, hung[i] = store.AllowN(ctx, fmt.Sprint("hung-", i), l, 1)
		})
	}
	var refused error
	for deadline := time.Now().Add(5 * time.Second); refused == nil && time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := store.AllowN(ctx, "probe", l, 1)
		cancel()
		if err != nil && strings.Contains(err.Error(), "answered nothing") {
			refused = err
		}
	}
	if refused == nil || !errors.Is(refused, ratelimit.ErrNotSent) {
		t.Fatalf("no decision of 20ms was refused at once while Redis was frozen: %v; want ErrNotSent, answered nothing", refused)
	}
	waiter := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		res, err := store.AllowN(ctx, "patient", l, 1)
		if err == nil && !res.Allowed {
			err = errors.New("denied")
		}
		waiter <- err
	}()
	p.Cont()
	thawed = true
	if err := <-waiter; err != nil {
		t.Fatalf("a decision of 8s, queued behind the frozen calls: %v, want allowed once Redis is back", err)
	}
	wg.Wait()
	for i, err := range hung {
		if err != nil && !errors.Is(err, ratelimit.ErrNotSent) {
			t.Errorf("hung call %d: %v, want answered once Redis is back (or not sent)", i, err)
		}
	}
}

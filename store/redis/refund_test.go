package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestRefundAfterScriptFlush: a refund whose script the server lost is
// sent again with EVAL (NOSCRIPT proves it ran nothing), and gives back
// once, in both encodings of the state.
func TestRefundAfterScriptFlush(t *testing.T) {
	for _, srv := range servers(t) {
		for _, enc := range []struct {
			name string
			opts []redisstore.Option
		}{
			{"detected encoding", nil},
			{"string encoding", []redisstore.Option{redisstore.WithStringEncoding()}},
		} {
			t.Run(srv.name+"/"+enc.name, func(t *testing.T) {
				c := srv.client(t)
				// The app's clock, half past an hour: a window's refund gives
				// back only a take surely in the current window, so a take
				// in the hour's first minute, younger than the age below,
				// would rightly get nothing back.
				base, start := time.Date(2026, 1, 1, 12, 30, 0, 0, time.UTC), time.Now()
				clock := func() time.Time { return base.Add(time.Since(start)) }
				s := redisstore.New(c, append(enc.opts, redisstore.WithPrefix(prefix(t)), redisstore.WithAppClock(clock))...)
				ctx := context.Background()
				for _, a := range []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog} {
					l := ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: a}
					t0 := time.Now()
					if res, err := s.AllowN(ctx, "k", l, 3); err != nil || res.Remaining != 0 {
						t.Fatalf("%v: take = %+v, %v", a, res, err)
					}
					flushScripts(t, c)
					res, err := s.RefundN(ctx, "k", l, 2, time.Since(t0)+time.Minute)
					if err != nil || !res.Allowed || res.Remaining != 2 {
						t.Fatalf("%v: refund after SCRIPT FLUSH = %+v, %v; want allowed, remaining 2", a, res, err)
					}
					if res, err := s.AllowN(ctx, "k", l, 0); err != nil || res.Remaining != 2 {
						t.Fatalf("%v: report after the refund = %+v, %v; want remaining 2", a, res, err)
					}
				}
			})
		}
	}
}

// TestRefundPastDeadlineGivesNothing: a refund that reaches Redis after
// its deadline gives nothing back and says so (ErrLate); it is never sent
// twice.
func TestRefundPastDeadlineGivesNothing(t *testing.T) {
	mr, c := newMini(t)
	hook := &countingHook{}
	c.AddHook(hook)
	s := redisstore.New(c)
	ctx, l := context.Background(), ratelimit.PerHour(3)
	start := time.Now()
	mr.SetTime(start)
	s.AllowN(ctx, "k", l, 3)
	learnClock(t, s) // the clock it sends deadlines in
	mr.SetTime(start.Add(time.Hour / 2))
	late, cancel := context.WithDeadline(ctx, time.Now().Add(time.Minute))
	defer cancel()
	calls := hook.n.Load()
	if _, err := s.RefundN(late, "k", l, 3, time.Hour); !errors.Is(err, redisstore.ErrLate) {
		t.Fatalf("a refund past its deadline: error %v, want ErrLate", err)
	}
	if n := hook.n.Load() - calls; n != 1 {
		t.Fatalf("the refund took %d calls, want 1", n)
	}
	if res, _ := s.AllowN(ctx, "k", l, 0); res.Remaining != 1 { // refilled, not given back
		t.Fatalf("after the late refund Remaining = %d, want 1", res.Remaining)
	}
}

// A request that turns out not to count gives back its take, in one
// script call; on Redis Cluster it touches the one key of the take.
func ExampleStore_RefundN() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer client.Close()
	store := redisstore.New(client)
	ctx, limit := context.Background(), ratelimit.PerHour(5)

	sent := time.Now()
	taken, _ := store.AllowN(ctx, "login/alice", limit, 1)
	refunded, err := store.RefundN(ctx, "login/alice", limit, 1, time.Since(sent))
	fmt.Println(taken.Remaining, refunded.Remaining, err)
	// Output: 4 5 <nil>
}

// BenchmarkRefund is a take and its refund (two round trips), on 10,000 keys of each
// algorithm, against the server RATELIMIT_REDIS_ADDR names; on miniredis
// when it is not set, which measures miniredis more than the store.
func BenchmarkRefund(b *testing.B) {
	var c *goredis.Client
	if os.Getenv("RATELIMIT_REDIS_ADDR") != "" {
		c = benchClient(b)
	} else {
		mr := miniredis.RunT(b)
		c = goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
		b.Cleanup(func() { c.Close() })
	}
	s := redisstore.New(c, redisstore.WithPrefix("bench:refund:"))
	ctx := context.Background()
	keys := benchKeyNames()
	for _, a := range algorithms {
		b.Run(a.String(), func(b *testing.B) {
			l := ratelimit.Limit{Rate: 10_000, Period: time.Hour, Algorithm: a}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				key := keys[i%len(keys)]
				i++
				sent := time.Now()
				if _, err := s.AllowN(ctx, key, l, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := s.RefundN(ctx, key, l, 1, time.Since(sent)+time.Millisecond); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

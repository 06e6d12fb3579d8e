package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestBatchDecidesEachTakeInOrder sends one batch by hand: takes on the
// same key see the takes before them, a late take in the middle takes
// nothing, and every algorithm decides as it does alone.
func TestBatchDecidesEachTakeInOrder(t *testing.T) {
	bg := context.Background()
	for _, srv := range servers(t) {
		for _, strs := range []bool{false, true} {
			name := srv.name
			opts := []redisstore.Option{redisstore.WithPrefix(prefix(t))}
			if strs {
				name += "/string encoding"
				opts = append(opts, redisstore.WithStringEncoding())
			}
			t.Run(name, func(t *testing.T) {
				s := redisstore.New(srv.client(t), opts...)
				learnClock(t, s)
				past, cancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
				defer cancel()
				late := lateContext{past}
				var takes []redisstore.BatchTake
				var want []string
				for _, a := range algorithms {
					l := ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: a}
					takes = append(takes,
						redisstore.BatchTake{Ctx: bg, Key: "k", Limit: l, N: 2},
						redisstore.BatchTake{Ctx: late, Key: "k", Limit: l, N: 1},
						redisstore.BatchTake{Ctx: bg, Key: "k", Limit: l, N: 1},
						redisstore.BatchTake{Ctx: bg, Key: "k", Limit: l, N: 1},
						redisstore.BatchTake{Ctx: bg, Key: "k", Limit: l, N: 0},
					)
					want = append(want, "allowed 1", "late", "allowed 0", "denied 0", "allowed 0")
				}
				res, errs := redisstore.DecideBatch(s, takes)
				for i := range takes {
					var got string
					switch {
					case errors.Is(errs[i], redisstore.ErrLate):
						got = "late"
					case errs[i] != nil:
						got = errs[i].Error()
					case res[i].Allowed:
						got = fmt.Sprint("allowed ", res[i].Remaining)
					default:
						got = fmt.Sprint("denied ", res[i].Remaining)
					}
					if got != want[i] {
						t.Errorf("take %d (%v, cost %d): %s, want %s", i, takes[i].Limit.Algorithm, takes[i].N, got, want[i])
					}
				}
				// What the batch wrote is what the next call sees.
				for _, a := range algorithms {
					l := ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: a}
					if res, err := s.AllowN(bg, "k", l, 1); err != nil || res.Allowed {
						t.Errorf("%v after the batch: %+v, %v; want denied", a, res, err)
					}
				}
			})
		}
	}
}

// TestConcurrentDecisionsAreBatchedAndExact: 64 goroutines on 8 keys send
// fewer script calls than decisions (they are batched), at most one per
// decision, and every key admits exactly its budget.
func TestConcurrentDecisionsAreBatchedAndExact(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			hook := &countingHook{}
			c.AddHook(hook)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			const workers, calls, keys, budget = 64, 40, 8, 200
			l := ratelimit.Limit{Rate: 1, Period: 24 * time.Hour, Burst: budget}
			if _, err := s.AllowN(context.Background(), "warm", l, 1); err != nil { // loads the script
				t.Fatal(err)
			}
			before := hook.n.Load()
			var allowed [keys]atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range calls {
						k := (w + i) % keys
						res, err := s.AllowN(context.Background(), fmt.Sprint("k", k), l, 1)
						if err != nil {
							t.Error(err)
							return
						}
						if res.Allowed {
							allowed[k].Add(1)
						}
					}
				}()
			}
			wg.Wait()
			sent := hook.n.Load() - before
			t.Logf("%d decisions in %d script calls", workers*calls, sent)
			if sent > workers*calls {
				t.Errorf("%d decisions sent %d commands, want at most one each", workers*calls, sent)
			}
			if sent == workers*calls {
				t.Errorf("%d decisions from %d goroutines sent %d calls: none was batched", workers*calls, workers, sent)
			}
			for k := range keys {
				if got := allowed[k].Load(); got != budget {
					t.Errorf("key %d admitted %d of %d calls, want exactly its budget %d", k, got, workers*calls/keys, budget)
				}
			}
		})
	}
}

// TestHungRedisCostsABoundedQueue: while Redis does not answer, each of
// the store's few calls in flight is stuck; the decisions behind them wait
// in a bounded queue, leave it at their deadline unsent, and once it is
// full a decision fails at once with ErrBusy.
func TestHungRedisCostsABoundedQueue(t *testing.T) {
	f := startFakeRedis(t, true)
	c := goredis.NewClient(&goredis.Options{Addr: f.ln.Addr().String(), ReadTimeout: 10 * time.Second, PoolSize: 2 * redisstore.MaxSenders})
	s := redisstore.New(c)
	l := ratelimit.PerSecond(10)
	stuck, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		c.Close() // the stuck calls fail
		wg.Wait()
	}()
	call := func(ctx context.Context) {
		defer wg.Done()
		s.AllowN(ctx, "k", l, 1)
	}
	for range redisstore.MaxSenders {
		wg.Add(1)
		go call(stuck)
	}
	waitUntil(t, "every sender stuck in Redis", func() bool { return f.scripts.Load() == redisstore.MaxSenders })

	// Queued decisions return at their deadline, never sent.
	ctx, done := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer done()
	start := time.Now()
	_, err := s.AllowN(ctx, "k", l, 1)
	if took := time.Since(start); err == nil || !errors.Is(err, context.DeadlineExceeded) || took > time.Second {
		t.Fatalf("a queued decision: %v after %v; want its deadline's error at about 50ms", err, took)
	}
	if redisstore.Queued(s) != 0 {
		t.Fatalf("%d decisions still queued after their callers left", redisstore.Queued(s))
	}

	for range redisstore.MaxQueued {
		wg.Add(1)
		go call(stuck)
	}
	waitUntil(t, "the queue full", func() bool { return redisstore.Queued(s) == redisstore.MaxQueued })
	start = time.Now()
	if _, err := s.AllowN(context.Background(), "k", l, 1); !errors.Is(err, redisstore.ErrBusy) || time.Since(start) > time.Second {
		t.Fatalf("a decision behind a full queue: %v after %v; want ErrBusy at once", err, time.Since(start))
	}
	cancel()
	waitUntil(t, "the queue empty once its callers left", func() bool { return redisstore.Queued(s) == 0 })
	if got := f.scripts.Load(); got != redisstore.MaxSenders {
		t.Fatalf("the server received %d script calls, want only the %d stuck ones", got, redisstore.MaxSenders)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

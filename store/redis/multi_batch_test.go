package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestBatchedAllowAllDecidesAsAlone: takes, AllowAlls of every algorithm
// and bookings sent as one batch decide exactly as the same calls sent one
// by one at the same instant (the app's clock, fixed), on keys of one
// slot: an AllowAll sees the decisions before it, the decisions after it
// see what it took, a denied one takes nothing, and the state after is
// the same.
func TestBatchedAllowAllDecidesAsAlone(t *testing.T) {
	bg := context.Background()
	tb := ratelimit.Limit{Rate: 10, Period: time.Second, Burst: 5}
	fw := ratelimit.Limit{Rate: 4, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
	sw := ratelimit.Limit{Rate: 4, Period: time.Minute, Algorithm: ratelimit.SlidingWindow}
	sl := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: ratelimit.SlidingLog}
	take := func(key string, l ratelimit.Limit, n int) redisstore.BatchTake {
		return redisstore.BatchTake{Ctx: bg, Key: key, Limit: l, N: n}
	}
	book := func(key string, n int, maxWait time.Duration) redisstore.BatchTake {
		return redisstore.BatchTake{Ctx: bg, Key: key, Limit: tb, N: n, Reserve: true, MaxWait: maxWait}
	}
	all := func(takes ...ratelimit.Take) redisstore.BatchTake {
		return redisstore.BatchTake{Ctx: bg, All: takes, Results: make([]ratelimit.Result, len(takes))}
	}
	rounds := [][]redisstore.BatchTake{{
		take("a/k", tb, 2),
		all(ratelimit.Take{Key: "a/k", Limit: tb, N: 2}, ratelimit.Take{Key: "b/k", Limit: fw, N: 1}, ratelimit.Take{Key: "c/k", Limit: sl, N: 1}),
		all(ratelimit.Take{Key: "a/k", Limit: tb, N: 2}, ratelimit.Take{Key: "b/k", Limit: fw, N: 1}), // denied by a/k
		take("b/k", fw, 1),
		book("a/k", 1, time.Second),
		all(ratelimit.Take{Key: "d/k", Limit: sw, N: 3}, ratelimit.Take{Key: "c/k", Limit: sl, N: 2}),
		all(ratelimit.Take{Key: "c/k", Limit: sl, N: 1}, ratelimit.Take{Key: "d/k", Limit: sw, N: 1}), // denied by c/k
		take("d/k", sw, 1),
	}, {
		all(ratelimit.Take{Key: "a/k", Limit: tb, N: 1}, ratelimit.Take{Key: "b/k", Limit: fw, N: 1}, ratelimit.Take{Key: "d/k", Limit: sw, N: 0}),
		book("a/k", 2, time.Second),
		all(ratelimit.Take{Key: "c/k", Limit: sl, N: 0}),
		take("a/k", tb, 0),
		all(ratelimit.Take{Key: "b/k", Limit: fw, N: 1}, ratelimit.Take{Key: "a/k", Limit: tb, N: 1}),
		// e/k is first written by a denied AllowAll: it is put back as
		// it was (no state), and the take after it finds it full.
		all(ratelimit.Take{Key: "e/k", Limit: tb, N: 2}, ratelimit.Take{Key: "a/k", Limit: tb, N: 5}),
		take("e/k", tb, 1),
		all(ratelimit.Take{Key: "f/k", Limit: fw, N: 1}, ratelimit.Take{Key: "e/k", Limit: tb, N: 1}, ratelimit.Take{Key: "c/k", Limit: sl, N: 3}),
	}}
	for _, srv := range servers(t) {
		for _, strs := range []bool{false, true} {
			name := srv.name
			if strs {
				name += "/string encoding"
			}
			t.Run(name, func(t *testing.T) {
				c := srv.client(t)
				clock := &appClock{}
				clock.Set(time.Unix(1_700_000_000, 123_456_000))
				store := func() *redisstore.Store {
					opts := []redisstore.Option{redisstore.WithPrefix(prefix(t)), redisstore.WithAppClock(clock.Now)}
					if strs {
						opts = append(opts, redisstore.WithStringEncoding())
					}
					return redisstore.New(c, opts...)
				}
				alone, batched := store(), store()
				for r, round := range rounds {
					clock.Set(clock.Now().Add(time.Duration(r) * 50 * time.Millisecond))
					want := make([]ratelimit.Reservation, len(round))
					wantAll := make([][]ratelimit.Result, len(round))
					for i, tk := range round {
						var err error
						switch {
						case tk.All != nil:
							wantAll[i] = make([]ratelimit.Result, len(tk.All))
							err = alone.AllowAll(bg, tk.All, wantAll[i])
						case tk.Reserve:
							want[i], err = alone.ReserveN(bg, tk.Key, tk.Limit, tk.N, tk.MaxWait)
						default:
							want[i].Result, err = alone.AllowN(bg, tk.Key, tk.Limit, tk.N)
						}
						if err != nil {
							t.Fatalf("round %d step %d alone: %v", r, i, err)
						}
					}
					got, errs := redisstore.DecideMixed(batched, round)
					for i, tk := range round {
						if errs[i] != nil {
							t.Fatalf("round %d step %d batched: %v", r, i, errs[i])
						}
						if tk.All != nil {
							for j := range tk.All {
								if tk.Results[j] != wantAll[i][j] {
									t.Errorf("round %d step %d, AllowAll's take %d (%+v): batched %+v, alone %+v", r, i, j, tk.All[j], tk.Results[j], wantAll[i][j])
								}
							}
							continue
						}
						if !got[i].At.Equal(want[i].At) || got[i].Result != want[i].Result || got[i].Tokens != want[i].Tokens || got[i].Delay != want[i].Delay {
							t.Errorf("round %d step %d (%s, n %d): batched %+v, alone %+v", r, i, tk.Key, tk.N, got[i], want[i])
						}
					}
				}
				// The state after: the same for every key.
				for _, k := range []struct {
					key string
					l   ratelimit.Limit
				}{{"a/k", tb}, {"b/k", fw}, {"c/k", sl}, {"d/k", sw}, {"e/k", tb}, {"f/k", fw}} {
					g, err1 := batched.AllowN(bg, k.key, k.l, 0)
					w, err2 := alone.AllowN(bg, k.key, k.l, 0)
					if err1 != nil || err2 != nil || g != w {
						t.Errorf("%s after the batches: batched %+v, %v; alone %+v, %v", k.key, g, err1, w, err2)
					}
				}
			})
		}
	}
}

// TestLateAllowAllInBatchTakesNothing: an AllowAll that reaches Redis
// after its deadline, in the middle of a batch, takes nothing, and the
// decisions after it are decided as if it were not there.
func TestLateAllowAllInBatchTakesNothing(t *testing.T) {
	bg := context.Background()
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			learnClock(t, s)
			past, cancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
			defer cancel()
			l, logl := ratelimit.PerHour(3), ratelimit.PerHour(3).WithAlgorithm(ratelimit.SlidingLog)
			late := redisstore.BatchTake{
				Ctx:     lateContext{past},
				All:     []ratelimit.Take{{Key: "a/k", Limit: l, N: 1}, {Key: "b/k", Limit: logl, N: 1}},
				Results: make([]ratelimit.Result, 2),
			}
			res, errs := redisstore.DecideBatch(s, []redisstore.BatchTake{
				{Ctx: bg, Key: "a/k", Limit: l, N: 1},
				late,
				{Ctx: bg, Key: "a/k", Limit: l, N: 1},
				{Ctx: bg, Key: "b/k", Limit: logl, N: 3},
			})
			if !errors.Is(errs[1], redisstore.ErrLate) {
				t.Fatalf("late AllowAll: %v, want ErrLate", errs[1])
			}
			for i, want := range map[int]int{0: 2, 2: 1, 3: 0} {
				if errs[i] != nil || !res[i].Allowed || res[i].Remaining != want {
					t.Errorf("take %d: %+v, %v; want allowed, remaining %d", i, res[i], errs[i], want)
				}
			}
		})
	}
}

// TestConcurrentAllowAllsAreBatchedAndExact: 64 goroutines of AllowAll,
// each of two limits of one of 8 clients, send fewer script calls than
// decisions (they are batched), at most one each; each client admits
// exactly its budget, and a denied AllowAll takes nothing from its other
// limit.
func TestConcurrentAllowAllsAreBatchedAndExact(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			hook := &countingHook{}
			c.AddHook(hook)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			// 160 AllowAlls a key for a budget of 100 (320 for 200 with
			// RATELIMIT_SLOW_TESTS).
			workers, calls, keys, budget, ceiling := 64, 20, 8, 100, 1000
			if slowTests() {
				calls, budget = 40, 200
			}
			perKey := ratelimit.Limit{Rate: 1, Period: 24 * time.Hour, Burst: budget}
			daily := ratelimit.Limit{Rate: ceiling, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow}
			takes := func(k int) []ratelimit.Take {
				return []ratelimit.Take{
					{Key: fmt.Sprint("api/k", k), Limit: perKey, N: 1},
					{Key: fmt.Sprint("api#daily/k", k), Limit: daily, N: 1},
				}
			}
			if err := s.AllowAll(context.Background(), takes(-1), make([]ratelimit.Result, 2)); err != nil { // loads the script
				t.Fatal(err)
			}
			before := hook.n.Load()
			allowed := make([]atomic.Int64, keys)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					results := make([]ratelimit.Result, 2)
					for i := range calls {
						k := (w + i) % keys
						if err := s.AllowAll(context.Background(), takes(k), results); err != nil {
							t.Error(err)
							return
						}
						if results[0].Allowed && results[1].Allowed {
							allowed[k].Add(1)
						} else if results[0].Allowed || !results[1].Allowed {
							t.Errorf("key %d: %+v; want denied by its per-key limit only", k, results)
							return
						}
					}
				})
			}
			wg.Wait()
			sent := hook.n.Load() - before
			t.Logf("%d AllowAlls in %d script calls", workers*calls, sent)
			if sent > int64(workers*calls) {
				t.Errorf("%d AllowAlls sent %d commands, want at most one each", workers*calls, sent)
			}
			if sent == int64(workers*calls) {
				t.Errorf("%d AllowAlls from %d goroutines sent %d calls: none was batched", workers*calls, workers, sent)
			}
			for k := range keys {
				if got := allowed[k].Load(); got != int64(budget) {
					t.Errorf("key %d admitted %d of %d AllowAlls, want exactly its budget %d", k, got, workers*calls/keys, budget)
				}
				res, err := s.AllowN(context.Background(), fmt.Sprint("api#daily/k", k), daily, 0)
				if err != nil || res.Remaining != ceiling-budget {
					t.Errorf("key %d's daily limit: %+v, %v; want %d left: only the admitted AllowAlls took from it", k, res, err, ceiling-budget)
				}
			}
		})
	}
}

package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestCountTakesAskTheDenyCache: once the store has denied a take of
// CountTakes, the same take is answered from the deny cache without a
// store call until its wait is over, for a fixed window and a token bucket,
// while the request's other takes are still counted by the store; after
// the wait, the store is asked again.
func TestCountTakesAskTheDenyCache(t *testing.T) {
	for _, alg := range []ratelimit.Algorithm{ratelimit.FixedWindow, ratelimit.TokenBucket} {
		t.Run(alg.String(), func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_700_000_000, 0).Truncate(time.Minute)}
			mem := memory.New(memory.WithClock(clock.Now))
			defer mem.Close()
			store := &countingStore{Store: &remoteStore{Store: mem}}
			l, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithDenyCache(1000), ratelimit.WithDenyCacheMaxAge(0), ratelimit.WithPlainKeys())
			if err != nil {
				t.Fatal(err)
			}
			ratelimit.SetClock(l, clock.Now)
			limit := ratelimit.PerMinute(2).WithAlgorithm(alg)
			takes := []ratelimit.Take{{Key: "spent", Limit: limit, N: 1}, {Key: "open", Limit: ratelimit.PerMinute(1000), N: 1}}
			results := make([]ratelimit.Result, 2)
			ctx := context.Background()
			for range 3 { // 2 allowed, then denied by the store
				l.CountTakes(ctx, takes, results)
			}
			if results[0].Allowed {
				t.Fatal("the third take of a budget of 2 was allowed")
			}
			before := store.calls.Load()
			for i := range 5 {
				ok, err := l.CountTakes(ctx, takes, results)
				if ok || err != nil || results[0].Allowed || !results[1].Allowed {
					t.Fatalf("request %d past the budget: %v %v, results %+v", i, ok, err, results)
				}
			}
			if calls := store.calls.Load() - before; calls != 5 {
				t.Fatalf("%d store calls for 5 requests past the budget, want 5: the other take's alone", calls)
			}
			report := make([]ratelimit.Result, 1)
			if _, err := l.CountTakes(ctx, []ratelimit.Take{{Key: "open", Limit: ratelimit.PerMinute(1000)}}, report); err != nil || report[0].Remaining != 1000-8 {
				t.Fatalf("the other take's budget: %d left (%v), want %d: each request counted", report[0].Remaining, err, 1000-8)
			}
			clock.Add(time.Minute) // the wait is over
			before = store.calls.Load()
			if ok, _ := l.CountTakes(ctx, takes, results); !ok || store.calls.Load()-before != 2 {
				t.Fatalf("after the wait: allowed %v with %d store calls, want allowed with 2", ok, store.calls.Load()-before)
			}
		})
	}
}

// TestCountTakesFillsAWindowAllowTakesLeft: AllowTakes denies a take of 4
// from a fixed window of 4 with 1 left (it takes nothing, and the deny
// cache remembers the denial); CountTakes's take of 4 must still fill the
// window, as without the cache, so that a take of 1 is denied after it.
func TestCountTakesFillsAWindowAllowTakesLeft(t *testing.T) {
	for _, cache := range []bool{false, true} {
		t.Run(map[bool]string{false: "no deny cache", true: "deny cache"}[cache], func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_700_000_000, 0).Truncate(time.Minute)}
			mem := memory.New(memory.WithClock(clock.Now))
			defer mem.Close()
			opts := []ratelimit.Option{ratelimit.WithPlainKeys(), ratelimit.WithDenyCache(0)}
			if cache {
				opts = append(opts, ratelimit.WithDenyCache(1000), ratelimit.WithDenyCacheMaxAge(0))
			}
			l, err := ratelimit.New(&remoteStore{Store: mem}, ratelimit.PerMinute(1), opts...)
			if err != nil {
				t.Fatal(err)
			}
			ratelimit.SetClock(l, clock.Now)
			ctx := context.Background()
			take := func(n int) ratelimit.Take {
				return ratelimit.Take{Key: "w", Limit: ratelimit.PerMinute(4).WithAlgorithm(ratelimit.FixedWindow), N: n}
			}
			res := make([]ratelimit.Result, 1)
			if ok, _ := l.AllowTakes(ctx, []ratelimit.Take{take(3)}, res); !ok {
				t.Fatal("a take of 3 of 4 denied")
			}
			if ok, _ := l.AllowTakes(ctx, []ratelimit.Take{take(4)}, res); ok {
				t.Fatal("a take of 4 with 1 left allowed")
			}
			if ok, _ := l.CountTakes(ctx, []ratelimit.Take{take(4)}, res); ok || res[0].Remaining != 0 {
				t.Fatalf("CountTakes of 4 with 1 left: allowed %v, %d left; want denied, the window filled (0 left)", ok, res[0].Remaining)
			}
			if ok, _ := l.AllowTakes(ctx, []ratelimit.Take{take(1)}, res); ok {
				t.Fatal("a take of 1 allowed after CountTakes filled the window")
			}
		})
	}
}

// TestCountTakesCachedAnswersKeepTheCacheAge: a take CountTakes answers
// from the deny cache does not make the cached denial new again: once
// WithDenyCacheMaxAge has passed since the store denied it, the store is
// asked (to see a budget given back elsewhere), however often the cache
// answered in between.
func TestCountTakesCachedAnswersKeepTheCacheAge(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	mem := memory.New(memory.WithClock(clock.Now))
	defer mem.Close()
	store := &countingStore{Store: &remoteStore{Store: mem}}
	l, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithDenyCacheMaxAge(time.Second), ratelimit.WithPlainKeys())
	if err != nil {
		t.Fatal(err)
	}
	ratelimit.SetClock(l, clock.Now)
	takes := []ratelimit.Take{{Key: "spent", Limit: ratelimit.PerHour(2), N: 1}}
	results := make([]ratelimit.Result, 1)
	ctx := context.Background()
	for range 3 { // 2 allowed, then denied by the store: a wait of 30 minutes
		l.CountTakes(ctx, takes, results)
	}
	before := store.calls.Load()
	for range 3 {
		clock.Add(300 * time.Millisecond)
		if ok, _ := l.CountTakes(ctx, takes, results); ok {
			t.Fatal("allowed within the denial's wait")
		}
	}
	if calls := store.calls.Load() - before; calls != 0 {
		t.Fatalf("%d store calls within the cache's age, want 0", calls)
	}
	clock.Add(300 * time.Millisecond) // 1.2 s after the store's denial
	l.CountTakes(ctx, takes, results)
	if calls := store.calls.Load() - before; calls != 1 {
		t.Fatalf("%d store calls past the cache's age of the store's denial, want 1: the cache's own answers made it new", calls)
	}
}

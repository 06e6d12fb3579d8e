package ratelimit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// ctxLocalStore is the default fallback as a store of the conformance
// suite, which expects a done context to be an error.
type ctxLocalStore struct{ ratelimit.Store }

func (s ctxLocalStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if err := ratelimit.ValidateCall(key, l, n); err != nil {
		return ratelimit.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	return s.Store.AllowN(ctx, key, l, n)
}

func (s ctxLocalStore) Local() bool     { return true }
func (s ctxLocalStore) Calendars() bool { return true }

// TestConformanceLocalStore: the fallback a limiter has by default decides
// as every store does, store/memory's results included.
func TestConformanceLocalStore(t *testing.T) {
	storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
		return ctxLocalStore{ratelimit.NewLocalStore(1_000_000, clock)}, set
	})
}

// TestLocalStoreBoundAndEviction: a flood of new keys (4 times the bound,
// 20 times with RATELIMIT_SLOW_TESTS) stays within the bound, and does not
// free a limited key.
func TestLocalStoreBoundAndEviction(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	const maxKeys = 1024
	s := ratelimit.NewLocalStore(maxKeys, clock.Now)
	ctx := context.Background()
	for _, l := range []ratelimit.Limit{
		ratelimit.PerMinute(5),
		ratelimit.PerMinute(5).WithAlgorithm(ratelimit.FixedWindow),
		ratelimit.PerMinute(5).WithAlgorithm(ratelimit.SlidingWindow),
		ratelimit.PerMinute(5).WithAlgorithm(ratelimit.SlidingLog),
	} {
		t.Run(l.Algorithm.String(), func(t *testing.T) {
			victim := "victim-" + l.Algorithm.String()
			for range 5 {
				if res, _ := s.AllowN(ctx, victim, l, 1); !res.Allowed {
					t.Fatal("the victim's budget denied before it was spent")
				}
			}
			for i := range sized(20, 4) * maxKeys {
				s.AllowN(ctx, fmt.Sprint("flood-", l.Algorithm, i), l, 1)
			}
			if n := ratelimit.LocalStoreLen(s); n > maxKeys {
				t.Fatalf("%d keys held, bound %d", n, maxKeys)
			}
			if res, _ := s.AllowN(ctx, victim, l, 1); res.Allowed {
				t.Fatal("a flood of new keys freed a limited key")
			}
		})
	}
}

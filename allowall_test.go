package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// refundingStore is a Refunder that is no MultiStore, as a Redis Cluster
// is for keys of two slots, counting its takes (countingStore).
type refundingStore struct {
	countingStore
	m *memory.Store
}

func (r *refundingStore) RefundN(ctx context.Context, key string, l ratelimit.Limit, n int, age time.Duration) (ratelimit.Result, error) {
	return r.m.RefundN(ctx, key, l, n, age)
}

// nonAtomic are the two ways AllowAll decides over a store that cannot
// decide several takes at once, each on a memory store at clock's time:
// a store of AllowN alone (countingStore), and a Refunder.
func nonAtomic(clock *fakeClock) []struct {
	name  string
	store ratelimit.Store
	calls func() int64
} {
	plain := &countingStore{Store: memory.New(memory.WithClock(clock.Now))}
	m := memory.New(memory.WithClock(clock.Now))
	refunding := &refundingStore{countingStore{Store: m}, m}
	return []struct {
		name  string
		store ratelimit.Store
		calls func() int64
	}{
		{"report then take", plain, plain.calls.Load},
		{"take then refund", refunding, refunding.calls.Load},
	}
}

// TestAllowAllOverABudgetPastItsLimitTakesNothing: a take of 0 on a budget
// past its limit (a window counted to 5, asked under a plan of 3) is
// denied, and so the request: the take before it keeps its tokens. The
// report of 0 passed it, and the take then found it denied, with the
// first take spent.
func TestAllowAllOverABudgetPastItsLimitTakesNothing(t *testing.T) {
	ctx := context.Background()
	pro := ratelimit.Limit{Rate: 5, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	free := ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	bucket := ratelimit.PerSecond(10)
	for _, s := range nonAtomic(&fakeClock{now: time.Unix(1_700_000_000, 0)}) {
		t.Run(s.name, func(t *testing.T) {
			if res, _ := s.store.AllowN(ctx, "alice", pro, 5); !res.Allowed {
				t.Fatalf("alice's 5 under pro: %+v", res)
			}
			results := make([]ratelimit.Result, 2)
			takes := []ratelimit.Take{{Key: "bob", Limit: bucket, N: 10}, {Key: "alice", Limit: free, N: 0}}
			if err := ratelimit.AllowAll(ctx, s.store, takes, results); err != nil {
				t.Fatal(err)
			}
			if !results[0].Allowed || results[1].Allowed || results[1].RetryAfter <= 0 {
				t.Errorf("results %+v; want bob's alone allowed, alice's denied with a wait", results)
			}
			if res, _ := s.store.AllowN(ctx, "bob", bucket, 0); res.Remaining != 10 {
				t.Errorf("bob's bucket after the denied request: %d left, want 10: nothing taken", res.Remaining)
			}
		})
	}
}

// TestAllowAllTellsTheStoresWait: a denied take's RetryAfter is the
// store's own (AllowN's on the same budget) for every algorithm on a
// store that refunds, and never earlier on one that cannot; the
// windows' were the time until full (21 s for a log whose next entry
// leaves in 18.5 s).
func TestAllowAllTellsTheStoresWait(t *testing.T) {
	ctx := context.Background()
	for _, l := range []ratelimit.Limit{
		{Rate: 3, Period: 20 * time.Second},
		{Rate: 3, Period: 20 * time.Second, Algorithm: ratelimit.FixedWindow},
		{Rate: 3, Period: 20 * time.Second, Algorithm: ratelimit.SlidingWindow},
		{Rate: 3, Period: 20 * time.Second, Algorithm: ratelimit.SlidingLog},
	} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		for _, s := range nonAtomic(clock) {
			t.Run(l.String()+"/"+s.name, func(t *testing.T) {
				start := clock.Now()
				for range 3 {
					s.store.AllowN(ctx, "x", l, 1)
					clock.Add(500 * time.Millisecond)
				}
				defer clock.Add(start.Sub(clock.Now())) // the next store starts where this one did
				results := make([]ratelimit.Result, 2)
				takes := []ratelimit.Take{{Key: "y", Limit: l, N: 1}, {Key: "x", Limit: l, N: 1}}
				if err := ratelimit.AllowAll(ctx, s.store, takes, results); err != nil {
					t.Fatal(err)
				}
				own, _ := s.store.AllowN(ctx, "x", l, 1)
				got := results[1].RetryAfter
				if results[1].Allowed || own.Allowed || got < own.RetryAfter ||
					s.name == "take then refund" && got != own.RetryAfter {
					t.Errorf("AllowAll's wait %v, AllowN's %v (allowed %v, %v); want the same, or never earlier without refunds",
						got, own.RetryAfter, results[1].Allowed, own.Allowed)
				}
				if res, _ := s.store.AllowN(ctx, "y", l, 0); res.Remaining != 3 {
					t.Errorf("y after the denied request: %d left, want 3", res.Remaining)
				}
			})
		}
	}
}

// TestAllowAllOnARefunderCostsOneCallPerTake: on a store that refunds, a
// request that passes costs one call per take, where reports first cost
// two.
func TestAllowAllOnARefunderCostsOneCallPerTake(t *testing.T) {
	ctx := context.Background()
	l := ratelimit.PerMinute(10)
	for _, s := range nonAtomic(&fakeClock{now: time.Unix(1_700_000_000, 0)}) {
		results := make([]ratelimit.Result, 3)
		takes := []ratelimit.Take{{Key: "a", Limit: l, N: 1}, {Key: "b", Limit: l, N: 2}, {Key: "c", Limit: l, N: 3}}
		if err := ratelimit.AllowAll(ctx, s.store, takes, results); err != nil {
			t.Fatal(err)
		}
		want := int64(3)
		if s.name == "report then take" {
			want = 6
		}
		for i, res := range results {
			if !res.Allowed || res.Remaining != 10-takes[i].N {
				t.Errorf("%s: take %d: %+v, want allowed with %d left", s.name, i, res, 10-takes[i].N)
			}
		}
		if n := s.calls(); n != want {
			t.Errorf("%s: %d store calls for 3 takes, want %d", s.name, n, want)
		}
	}
}

package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// callCounter is a shared (not Local) store that counts its calls.
type callCounter struct {
	*memory.Store
	allowN, allowAll, reserveN atomic.Int64
}

func (c *callCounter) ReserveN(ctx context.Context, key string, l ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	c.reserveN.Add(1)
	return c.Store.ReserveN(ctx, key, l, n, maxWait)
}

func (*callCounter) Local() bool { return false }

func (c *callCounter) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	c.allowN.Add(1)
	return c.Store.AllowN(ctx, key, l, n)
}

func (c *callCounter) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	c.allowAll.Add(1)
	return c.Store.AllowAll(ctx, takes, results)
}

// fleet returns n limiters sharing one store, as n app servers would,
// each with its own deny cache.
func fleet(t *testing.T, clock *fakeClock, n int, limit ratelimit.Limit, opts ...ratelimit.Option) ([]*ratelimit.Limiter, *callCounter) {
	t.Helper()
	mem := memory.New(memory.WithClock(clock.Now))
	t.Cleanup(func() { mem.Close() })
	store := &callCounter{Store: mem}
	var ls []*ratelimit.Limiter
	for range n {
		l, err := ratelimit.New(store, limit, append(opts, ratelimit.WithName("login"), ratelimit.WithPlainKeys())...)
		if err != nil {
			t.Fatal(err)
		}
		ratelimit.SetClock(l, clock.Now)
		ls = append(ls, l)
	}
	return ls, store
}

// TestBlockIsFleetWide: a block that one app server starts holds on every
// other, which never saw the denial, once the budget is back.
func TestBlockIsFleetWide(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ls, _ := fleet(t, clock, 2, ratelimit.PerMinute(2), ratelimit.WithBlock(10*time.Minute))
	a, b := ls[0], ls[1]
	allowed(t, a, "acct", true)
	allowed(t, b, "acct", true)
	allowed(t, a, "acct", false) // A starts the block
	clock.Add(time.Minute)       // the budget is full again
	res := allowed(t, b, "acct", false)
	if res.RetryAfter != 9*time.Minute {
		t.Fatalf("B's RetryAfter %v, want the block's 9m", res.RetryAfter)
	}
	if err := a.Reset(context.Background(), "acct"); err != nil {
		t.Fatal(err)
	}
	// B remembers the block in its deny cache for as long as it lasts:
	// what the deny cache costs; A, which reset the key, forgot it.
	allowed(t, a, "acct", true)
	clock.Add(9 * time.Minute)
	allowed(t, b, "acct", true)
}

// TestBlockStoreCalls: with a block, a decision is still one store call,
// and a denial that starts a block one more; a blocked key's requests are
// answered by the deny cache (for the whole block without a max age).
func TestBlockStoreCalls(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ls, store := fleet(t, clock, 1, ratelimit.PerMinute(2), ratelimit.WithBlock(time.Hour), ratelimit.WithDenyCacheMaxAge(0))
	l := ls[0]
	allowed(t, l, "acct", true)
	allowed(t, l, "acct", true)
	if n, m := store.allowAll.Load(), store.allowN.Load(); n != 2 || m != 0 {
		t.Fatalf("%d AllowAll and %d AllowN calls for 2 decisions, want 2 and 0", n, m)
	}
	allowed(t, l, "acct", false)
	if n, m := store.allowAll.Load(), store.allowN.Load(); n != 3 || m != 1 {
		t.Fatalf("%d AllowAll and %d AllowN calls after the denial, want 3 and 1 (the block's start)", n, m)
	}
	for range 10 {
		clock.Add(time.Minute)
		if res := allowed(t, l, "acct", false); res.Remaining != 0 {
			t.Fatalf("blocked: %+v", res)
		}
	}
	if n := store.allowAll.Load() + store.allowN.Load(); n != 4 {
		t.Fatalf("%d store calls, want 4: the deny cache answers a blocked key", n)
	}
}

// TestBlockBadConfig: a block needs a positive duration, and a request
// that waits cannot be blocked.
func TestBlockBadConfig(t *testing.T) {
	for _, opts := range [][]ratelimit.Option{
		{ratelimit.WithBlock(0)},
		{ratelimit.WithBlock(-time.Second)},
		{ratelimit.WithBlock(time.Minute), ratelimit.WithMaxDelay(time.Second)},
	} {
		if _, err := ratelimit.New(memory.New(), ratelimit.PerMinute(1), opts...); err == nil {
			t.Errorf("New accepted %d options", len(opts))
		} else if !strings.Contains(err.Error(), "WithBlock") {
			t.Errorf("error %q does not name WithBlock", err)
		}
	}
}

// TestABlockedRequestIsToldTheWaitAfterWhatItSpent: a request made during
// a block spends its budget's refilled token, and its Retry-After is the
// budget's wait after that take when it is longer than the block's end; a
// client that comes back then is served, not denied by the empty budget
// and blocked again. One app server and a fleet of two, on a shared store.
func TestABlockedRequestIsToldTheWaitAfterWhatItSpent(t *testing.T) {
	for _, servers := range []int{1, 2} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		ls, _ := fleet(t, clock, servers, ratelimit.PerHour(5), ratelimit.WithBlock(15*time.Minute))
		ctx := context.Background()
		for i := range 5 {
			if res, _ := ls[i%servers].Allow(ctx, "pair"); !res.Allowed {
				t.Fatalf("%d servers: request %d denied", servers, i+1)
			}
		}
		if res, _ := ls[0].Allow(ctx, "pair"); res.Allowed || res.RetryAfter != 15*time.Minute {
			t.Fatalf("%d servers: the 6th: %+v, want a block of 15m", servers, res)
		}
		clock.Add(12 * time.Minute) // a token refilled; 3 minutes of block left
		res, _ := ls[servers-1].Allow(ctx, "pair")
		if res.Allowed || res.RetryAfter != 12*time.Minute {
			t.Fatalf("%d servers: during the block, with a token refilled: %+v, want denied, RetryAfter 12m (the token it spent comes back at +24m)", servers, res)
		}
		clock.Add(res.RetryAfter)
		if res, _ := ls[0].Allow(ctx, "pair"); !res.Allowed {
			t.Fatalf("%d servers: after the Retry-After it was told: %+v, want allowed", servers, res)
		}
	}
}

// downable is a shared store that fails every call while down.
type downable struct {
	*memory.Store
	down atomic.Bool
}

func (*downable) Local() bool { return false }

func (d *downable) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if d.down.Load() {
		return ratelimit.Result{}, errors.New("store down")
	}
	return d.Store.AllowN(ctx, key, l, n)
}

func (d *downable) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	if d.down.Load() {
		return errors.New("store down")
	}
	return d.Store.AllowAll(ctx, takes, results)
}

// onDownable returns a limiter named login over a downable memory store on
// clock, with plain keys and the errors kept quiet, and the store.
func onDownable(t *testing.T, clock *fakeClock, limit ratelimit.Limit, opts ...ratelimit.Option) (*ratelimit.Limiter, *downable) {
	t.Helper()
	mem := memory.New(memory.WithClock(clock.Now))
	t.Cleanup(func() { mem.Close() })
	store := &downable{Store: mem}
	l, err := ratelimit.New(store, limit, append([]ratelimit.Option{ratelimit.WithName("login"), ratelimit.WithPlainKeys(),
		ratelimit.WithErrorHandler(func(*http.Request, error) {})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ratelimit.SetClock(l, clock.Now)
	return l, store
}

// TestABlockSeenHoldsThroughAnOutage: while the store fails, a block this
// app server saw holds to its end from its deny cache, past the cache's
// maximum age (which is there to see a Reset made elsewhere, which needs
// the store too), rather than the fallback granting a budget of its own;
// once the block has ended, the fallback decides.
func TestABlockSeenHoldsThroughAnOutage(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l, store := onDownable(t, clock, ratelimit.PerHour(5), ratelimit.WithBlock(15*time.Minute))
	ctx := context.Background()
	for range 5 {
		l.Allow(ctx, "pair")
	}
	if res, _ := l.Allow(ctx, "pair"); res.Allowed {
		t.Fatal("the 6th allowed: no block")
	}
	store.down.Store(true)
	clock.Add(11 * time.Second) // past the deny cache's 10 s
	for i := range 10 {
		res, _ := l.Allow(ctx, "pair")
		if res.Allowed || res.RetryAfter != 15*time.Minute-11*time.Second {
			t.Fatalf("guess %d during the outage, in the block: %+v, want denied until the block's end", i+1, res)
		}
	}
	clock.Add(15 * time.Minute)
	if res, _ := l.Allow(ctx, "pair"); !res.Allowed {
		t.Fatalf("after the block, the store still down: %+v, want the fallback's allowance", res)
	}
}

// TestABlockedRequestOfACostIsToldTheWaitForItsCost: a blocked request of
// cost 5 that spends a fresh window's budget (or a bucket's) is told the
// wait until the budget holds 5 again, not 1: a client that comes back
// then with the same cost is served, not denied and blocked again.
func TestABlockedRequestOfACostIsToldTheWaitForItsCost(t *testing.T) {
	for _, limit := range []ratelimit.Limit{
		{Rate: 6, Period: 10 * time.Minute, Algorithm: ratelimit.FixedWindow},
		ratelimit.PerHour(6),
	} {
		t.Run(limit.String(), func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_700_000_400, 0)} // 0 s into a 10-minute window
			ls, _ := fleet(t, clock, 1, limit, ratelimit.WithBlock(5*time.Minute))
			l, ctx := ls[0], context.Background()
			l.AllowN(ctx, "k", 6)
			clock.Add(9 * time.Minute)
			if res, _ := l.AllowN(ctx, "k", 1); res.Allowed {
				t.Fatal("a 7th token allowed: no block")
			}
			clock.Add(2 * time.Minute) // a new window; a bucket has refilled 2; 3 minutes of block left
			res, _ := l.AllowN(ctx, "k", 5)
			if res.Allowed || res.RetryAfter <= 3*time.Minute {
				t.Fatalf("a cost of 5 during the block: %+v, want denied past the block's end", res)
			}
			clock.Add(res.RetryAfter)
			if res, _ := l.AllowN(ctx, "k", 5); !res.Allowed {
				t.Fatalf("a cost of 5 after the Retry-After it was told: %+v, want allowed", res)
			}
		})
	}
}

// TestABlockedRequestIsToldEveryPolicysWait: a request during a block
// spends every policy that allows it, and is told the longest of their
// waits after that, also a policy's whose own key is not blocked: a
// window of 2 per 2 s blocks (7 s) a cost of 2 that a bucket of 4 a minute
// would have let through; at +6.5 s, on an app server that has not seen
// the block, the store spends both, and the request is told the bucket's
// wait for 2 more tokens (about 23.6 s), not the window's 1.5 s; coming
// back then, it is served, not denied by the bucket and blocked again.
func TestABlockedRequestIsToldEveryPolicysWait(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)} // a 2 s window starts
	ls, _ := fleet(t, clock, 2, ratelimit.PerMinute(4), ratelimit.WithBlock(7*time.Second),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "window", Limit: ratelimit.Limit{Rate: 2, Period: 2 * time.Second, Algorithm: ratelimit.FixedWindow}}))
	ctx := context.Background()
	if res, _ := ls[0].AllowN(ctx, "k", 2); !res.Allowed {
		t.Fatal("the first request denied")
	}
	clock.Add(100 * time.Millisecond)
	if res, _ := ls[0].AllowN(ctx, "k", 2); res.Allowed {
		t.Fatal("the second allowed: no block")
	}
	clock.Add(6400 * time.Millisecond)
	res, _ := ls[1].AllowN(ctx, "k", 2)
	if res.Allowed || res.RetryAfter < 23*time.Second {
		t.Fatalf("during the window's block: %+v, want denied until the bucket holds 2 again (about 23.6s)", res)
	}
	clock.Add(res.RetryAfter)
	if res, _ := ls[1].AllowN(ctx, "k", 2); !res.Allowed {
		t.Fatalf("after the Retry-After it was told: %+v, want allowed", res)
	}
}

// TestABlockSeenHoldsThroughAnOutageForEveryCost: a block started by a
// denial of cost 5 holds through an outage for requests of cost 1 too (a
// block denies every request), not only for those the denial's cost
// covers.
func TestABlockSeenHoldsThroughAnOutageForEveryCost(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l, store := onDownable(t, clock, ratelimit.PerHour(10), ratelimit.WithBlock(time.Hour))
	ctx := context.Background()
	l.AllowN(ctx, "k", 9)
	if res, _ := l.AllowN(ctx, "k", 5); res.Allowed {
		t.Fatal("a cost of 5 allowed with 1 left: no block")
	}
	store.down.Store(true)
	clock.Add(11 * time.Second)
	for i := range 5 {
		if res, _ := l.AllowN(ctx, "k", 1); res.Allowed {
			t.Fatalf("a cost of 1 during the outage, in the block (%d): allowed by the fallback", i+1)
		}
	}
}

// TestAResetElsewhereBeforeAnOutageIsSeen: a denial that is no block keeps
// WithDenyCacheMaxAge's bound through an outage: a Reset made on another
// app server just before the store failed is seen once that age has
// passed (the fallback decides then), as it would be with the store up.
func TestAResetElsewhereBeforeAnOutageIsSeen(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	mem := memory.New(memory.WithClock(clock.Now))
	defer mem.Close()
	store := &downable{Store: mem}
	var ls []*ratelimit.Limiter
	for range 2 {
		l, err := ratelimit.New(store, ratelimit.PerHour(2), ratelimit.WithName("quota"), ratelimit.WithPlainKeys(),
			ratelimit.WithDenyCacheMaxAge(time.Second), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		ratelimit.SetClock(l, clock.Now)
		ls = append(ls, l)
	}
	a, b, ctx := ls[0], ls[1], context.Background()
	a.AllowN(ctx, "k", 2)
	if res, _ := a.Allow(ctx, "k"); res.Allowed {
		t.Fatal("a third token of 2")
	}
	if err := b.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	clock.Add(200 * time.Millisecond)
	store.down.Store(true)
	clock.Add(1500 * time.Millisecond) // past the cache's age
	if res, _ := a.Allow(ctx, "k"); !res.Allowed {
		t.Fatalf("1.7 s after a Reset elsewhere, the store down: %+v, want the fallback's answer (allowed), not the stale denial", res)
	}
}

package ratelimit_test

import (
	"context"
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

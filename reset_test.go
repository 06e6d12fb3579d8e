package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// clocked returns a memory store and a limiter over it, both on clock.
func clocked(t *testing.T, clock *fakeClock, remote bool, limit ratelimit.Limit, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	mem := memory.New(memory.WithClock(clock.Now))
	t.Cleanup(func() { mem.Close() })
	var store ratelimit.Store = mem
	if remote {
		store = calendarRemote{mem}
		opts = append(opts, ratelimit.WithPlainKeys())
	}
	l, err := ratelimit.New(store, limit, append(opts, ratelimit.WithName("login"))...)
	if err != nil {
		t.Fatal(err)
	}
	ratelimit.SetClock(l, clock.Now)
	return l
}

func allowed(t *testing.T, l *ratelimit.Limiter, key string, want bool) ratelimit.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), key)
	if err != nil || res.Allowed != want {
		t.Fatalf("Allow(%q) = %+v, %v; want allowed %v", key, res, err, want)
	}
	return res
}

func TestResetUnblocksAtOnce(t *testing.T) {
	for _, remote := range []bool{false, true} { // remote: with a deny cache
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		l := clocked(t, clock, remote, ratelimit.PerHour(2),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Limit: ratelimit.PerDay(3, nil)}))
		allowed(t, l, "user:1", true)
		allowed(t, l, "user:1", true)
		allowed(t, l, "user:1", false)
		allowed(t, l, "user:2", true)
		if remote && ratelimit.DenyCacheLen(l) == 0 {
			t.Fatal("the denial is not in the deny cache")
		}
		if err := l.Reset(context.Background(), "user:1"); err != nil {
			t.Fatal(err)
		}
		if remote && ratelimit.DenyCacheLen(l) != 0 {
			t.Fatal("Reset left the deny cache's entry")
		}
		if res := allowed(t, l, "user:1", true); res.Remaining != 1 {
			t.Fatalf("after Reset, Remaining %d, want 1 (2 per hour and 3 per day full again)", res.Remaining)
		}
		// Another key is untouched.
		if res, _ := l.AllowN(context.Background(), "user:2", 0); res.Remaining != 1 {
			t.Fatalf("user:2 Remaining %d, want 1", res.Remaining)
		}
	}
}

func TestResetNeedsAResetter(t *testing.T) {
	l, err := ratelimit.New(failingStore{}, ratelimit.PerSecond(1), ratelimit.WithPlainKeys())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Reset(context.Background(), "k"); !errors.Is(err, ratelimit.ErrNoReset) {
		t.Fatalf("Reset = %v, want ErrNoReset", err)
	}
	if err := l.Reset(context.Background(), ""); !errors.Is(err, ratelimit.ErrEmptyKey) {
		t.Fatalf("Reset(\"\") = %v, want ErrEmptyKey", err)
	}
}

func TestReportTakesNothing(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := clocked(t, clock, false, ratelimit.PerMinute(3))
	allowed(t, l, "k", true)
	for range 3 {
		if res, err := l.AllowN(context.Background(), "k", 0); err != nil || !res.Allowed || res.Remaining != 2 {
			t.Fatalf("Report = %+v, %v; want allowed, remaining 2", res, err)
		}
	}
}

func TestBlockAfterDenial(t *testing.T) {
	for _, remote := range []bool{false, true} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		l := clocked(t, clock, remote, ratelimit.PerMinute(2), ratelimit.WithBlock(10*time.Minute))
		allowed(t, l, "acct", true)
		allowed(t, l, "acct", true)
		allowed(t, l, "acct", false) // blocked from here
		clock.Add(time.Minute)       // the budget is full again, the block holds
		res := allowed(t, l, "acct", false)
		if res.RetryAfter != 9*time.Minute || res.Remaining != 0 {
			t.Fatalf("blocked: %+v, want RetryAfter 9m", res)
		}
		if res, _ := l.AllowN(context.Background(), "acct", 0); res.Allowed || res.RetryAfter != 9*time.Minute {
			t.Fatalf("Report of a blocked key = %+v", res)
		}
		allowed(t, l, "other", true) // other keys are not blocked
		clock.Add(9 * time.Minute)
		allowed(t, l, "acct", true)
		allowed(t, l, "acct", true)
		allowed(t, l, "acct", false) // blocked again
		if err := l.Reset(context.Background(), "acct"); err != nil {
			t.Fatal(err)
		}
		allowed(t, l, "acct", true) // Reset lifts the block
	}
	if _, err := ratelimit.New(memory.New(), ratelimit.PerMinute(1), ratelimit.WithBlock(0)); err == nil {
		t.Fatal("WithBlock(0) accepted")
	}
}

// TestResetWhatRequestsUse: Reset needs no request, and resets the budget
// a request's limit uses, whichever plan or LimitFunc limit it is.
func TestResetWhatRequestsUse(t *testing.T) {
	type customerKey struct{}
	quota := func(ctx context.Context) (ratelimit.Limit, error) {
		n, ok := ctx.Value(customerKey{}).(int)
		if !ok {
			return ratelimit.Limit{}, errors.New("no customer")
		}
		return ratelimit.PerDay(n, nil), nil
	}
	for _, c := range []struct {
		name   string
		policy ratelimit.Policy
		ctx    context.Context
	}{
		{"a LimitFunc's daily quota", ratelimit.Policy{Name: "daily", Algorithm: ratelimit.FixedWindow, LimitFunc: quota},
			context.WithValue(context.Background(), customerKey{}, 3)},
		{"a LimitFunc's token bucket", ratelimit.Policy{Name: "hourly", LimitFunc: func(context.Context) (ratelimit.Limit, error) {
			return ratelimit.PerHour(3), nil
		}}, context.Background()},
		{"a plan's daily quota", ratelimit.Policy{Name: "daily", Plans: []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerDay(3, nil)}, {Name: "pro", Limit: ratelimit.PerDay(100, nil)},
		}}, ratelimit.ContextWithPlan(context.Background(), "free")},
	} {
		for _, remote := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, remote %v", c.name, remote), func(t *testing.T) {
				clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
				l := clocked(t, clock, remote, ratelimit.PerSecond(100), ratelimit.WithPolicy(c.policy))
				for i, want := range []bool{true, true, true, false} {
					if res, err := l.Allow(c.ctx, "cust"); err != nil || res.Allowed != want {
						t.Fatalf("request %d: %+v, %v; want allowed %v", i+1, res, err, want)
					}
				}
				if err := l.Reset(context.Background(), "cust"); err != nil {
					t.Fatal(err)
				}
				if res, err := l.Allow(c.ctx, "cust"); err != nil || !res.Allowed || res.Remaining != 2 {
					t.Fatalf("after Reset: %+v, %v; want allowed, 2 left of 3", res, err)
				}
			})
		}
	}
}

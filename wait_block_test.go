package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestWaitHonoursBlocks: a blocked key gets no token through Wait before
// its block ends, on a Local store and on one that is not.
func TestWaitHonoursBlocks(t *testing.T) {
	for _, remote := range []bool{false, true} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		l := clocked(t, clock, remote, ratelimit.PerMinute(5), ratelimit.WithBlock(time.Hour))
		for range 5 {
			allowed(t, l, "k", true)
		}
		allowed(t, l, "k", false) // starts the block
		clock.Add(time.Minute)    // the budget is full again; the block holds
		got := 0
		for range 5 {
			ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(time.Minute))
			if l.Wait(ctx, "k") == nil {
				got++
			}
			cancel()
		}
		if got != 0 {
			t.Errorf("remote %v: a key blocked for an hour got %d of 5 tokens through Wait", remote, got)
		}
	}
}

// TestChargeKeysEveryPolicy: Charge refuses a limiter whose policy keys
// requests its own way (it would charge that policy under the caller's
// key), and charges nothing when any policy cannot be keyed.
func TestChargeKeysEveryPolicy(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	perIP := ratelimit.Policy{Name: "per-ip", Limit: ratelimit.PerMinute(3), Key: ratelimit.KeyByIP()}
	l := clocked(t, clock, false, ratelimit.PerMinute(10), ratelimit.WithPolicy(perIP))
	if err := l.Charge(context.Background(), "k", 5); !errors.Is(err, ratelimit.ErrBadConfig) {
		t.Fatalf("Charge on a policy keyed its own way: %v, want ErrBadConfig", err)
	}

	plans := ratelimit.Policy{Name: "plan", Plans: []ratelimit.Plan{{Name: "free", Limit: ratelimit.PerMinute(5)}}}
	l = clocked(t, clock, false, ratelimit.PerMinute(10), ratelimit.WithPolicy(plans))
	if err := l.Charge(context.Background(), "k", 5); !errors.Is(err, ratelimit.ErrBadConfig) {
		t.Fatalf("Charge without a plan: %v, want ErrBadConfig", err)
	}
	res, _ := l.AllowN(ratelimit.ContextWithPlan(context.Background(), "free"), "k", 0)
	if res.Remaining != 5 {
		t.Fatalf("a charge that failed took from a policy: Remaining %d, want 5", res.Remaining)
	}
	_ = http.StatusOK
}

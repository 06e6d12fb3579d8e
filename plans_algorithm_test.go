package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestOnePolicyOneAlgorithm: a key keeps one budget across the limits of a
// policy, which a store keeps apart by algorithm, so a policy's plans or
// LimitFunc limits are of one algorithm: free a fixed window of 10 an
// hour and pro a token bucket of 20 would admit 30 in the hour. A sliding
// log's plans are of one period too: a request under pro's 1 per 2 s
// forgot the free plan's 60 of the minute, which then admitted 60 more.
func TestOnePolicyOneAlgorithm(t *testing.T) {
	fw := func(n int) ratelimit.Limit { return ratelimit.PerHour(n).WithAlgorithm(ratelimit.FixedWindow) }
	limitFunc := func(context.Context) (ratelimit.Limit, error) { return fw(1), nil }
	for _, c := range []struct {
		name string
		p    ratelimit.Policy
		want string // in New's error; "" for none
	}{
		{"plans of two algorithms", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{
			{Name: "free", Limit: fw(10)}, {Name: "pro", Limit: ratelimit.PerHour(20)},
		}}, `plan "free" counts with a fixed window and plan "pro" with a token bucket`},
		{"plans of one algorithm", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{
			{Name: "free", Limit: fw(10)}, {Name: "pro", Limit: ratelimit.PerDay(20, nil)},
		}}, ""},
		{"sliding log plans of two periods", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{
			{Name: "pro", Limit: ratelimit.PerMinute(60).WithAlgorithm(ratelimit.SlidingLog)},
			{Name: "free", Limit: ratelimit.Limit{Rate: 1, Period: 2 * time.Second, Algorithm: ratelimit.SlidingLog}},
		}}, "give the plans of a sliding log one period"},
		{"sliding log plans of one period", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{
			{Name: "pro", Limit: ratelimit.PerMinute(60).WithAlgorithm(ratelimit.SlidingLog)},
			{Name: "free", Limit: ratelimit.PerMinute(1).WithAlgorithm(ratelimit.SlidingLog)},
		}}, ""},
		{"an Algorithm beside a Limit", ratelimit.Policy{Name: "p", Limit: fw(1), Algorithm: ratelimit.FixedWindow}, "leave it zero without"},
		{"an Algorithm beside plans", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{{Name: "a", Limit: fw(1)}}, Algorithm: ratelimit.FixedWindow}, "leave it zero without"},
		{"an unknown Algorithm", ratelimit.Policy{Name: "p", LimitFunc: limitFunc, Algorithm: 7}, "unknown algorithm Algorithm(7)"},
		{"a LimitFunc's Algorithm", ratelimit.Policy{Name: "p", LimitFunc: limitFunc, Algorithm: ratelimit.FixedWindow}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ratelimit.New(memory.New(), ratelimit.PerSecond(1), ratelimit.WithPolicy(c.p))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("New = %v, want %q", err, c.want)
			}
		})
	}
}

// TestLimitFuncKeepsOneBudget: a customer's contract alternating between
// 10 and 20 an hour (fixed windows) gets at most 20 in the hour, and a
// limit of another algorithm than the policy's is the request's error.
func TestLimitFuncKeepsOneBudget(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	type contractKey struct{}
	l := clocked(t, clock, true, ratelimit.PerSecond(1000), ratelimit.WithPolicy(ratelimit.Policy{
		Name: "contract", Algorithm: ratelimit.FixedWindow,
		LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
			return ctx.Value(contractKey{}).(ratelimit.Limit), nil
		},
	}))
	small := context.WithValue(context.Background(), contractKey{}, ratelimit.PerHour(10).WithAlgorithm(ratelimit.FixedWindow))
	large := context.WithValue(context.Background(), contractKey{}, ratelimit.PerHour(20).WithAlgorithm(ratelimit.FixedWindow))
	admitted := 0
	for i := range 60 {
		ctx := small
		if i%2 == 1 {
			ctx = large
		}
		if res, err := l.Allow(ctx, "cust"); err != nil {
			t.Fatal(err)
		} else if res.Allowed {
			admitted++
		}
		clock.Add(time.Second)
	}
	if admitted != 20 {
		t.Fatalf("%d admitted in the hour, want 20 (one budget: 10 under the small contract, then up to 20)", admitted)
	}
	bucket := context.WithValue(context.Background(), contractKey{}, ratelimit.PerHour(20))
	if _, err := l.Allow(bucket, "cust"); !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), "see Policy.Algorithm") {
		t.Fatalf("a token bucket from a fixed-window policy's LimitFunc: %v, want ErrBadConfig", err)
	}
}

package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

type requestLimitKey struct{}

// withRequestLimit names the limit of a request, as an app's
// authentication would: a LimitFunc reads it, and it names a plan.
func withRequestLimit(ctx context.Context, n int) context.Context {
	return ratelimit.ContextWithPlan(context.WithValue(ctx, requestLimitKey{}, n), "n"+strconv.Itoa(n))
}

// window is a fixed window of n a minute.
func window(n int) ratelimit.Limit {
	return ratelimit.Limit{Rate: n, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
}

// overridePolicies are the two ways a request chooses its limit: a
// LimitFunc, and plans, over limits of the algorithm of window.
var overridePolicies = []struct {
	name   string
	policy func(limit func(int) ratelimit.Limit, sizes ...int) ratelimit.Policy
}{
	{"a LimitFunc", func(limit func(int) ratelimit.Limit, _ ...int) ratelimit.Policy {
		return ratelimit.Policy{Name: "quota", Algorithm: limit(1).Algorithm, LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
			return limit(ctx.Value(requestLimitKey{}).(int)), nil
		}}
	}},
	{"plans", func(limit func(int) ratelimit.Limit, sizes ...int) ratelimit.Policy {
		p := ratelimit.Policy{Name: "quota"}
		for _, n := range sizes {
			p.Plans = append(p.Plans, ratelimit.Plan{Name: "n" + strconv.Itoa(n), Limit: limit(n)})
		}
		return p
	}},
}

// TestDenyCacheHoldsOnlyForItsLimit is go-chi/httprate's
// TestOverrideRequestLimit on a store that is not Local (so with a deny
// cache): one key, a window of 3, then the request's limit raised to 5,
// back to 3, raised to 6. A raised limit takes effect on the next request.
func TestDenyCacheHoldsOnlyForItsLimit(t *testing.T) {
	steps := []struct {
		limit   int
		allowed []bool
	}{
		{3, []bool{true, true, true, false}},
		{5, []bool{true, true, false}},
		{3, []bool{false}},
		{6, []bool{true, false}},
	}
	for _, way := range overridePolicies {
		for _, keys := range []int{0, 100} {
			t.Run(way.name+", deny cache of "+strconv.Itoa(keys), func(t *testing.T) {
				clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
				l := clocked(t, clock, true, ratelimit.PerSecond(1000), ratelimit.WithDenyCache(keys),
					ratelimit.WithPolicy(way.policy(window, 3, 5, 6)))
				for _, s := range steps {
					ctx := withRequestLimit(context.Background(), s.limit)
					for i, want := range s.allowed {
						res, err := l.Allow(ctx, "user:1")
						if err != nil || res.Allowed != want {
							t.Fatalf("limit %d, request %d: %+v, %v; want allowed %v", s.limit, i+1, res, err, want)
						}
					}
				}
			})
		}
	}
}

// TestDenyCacheAcrossLimitsIsExact drives a limiter with a deny cache on
// a store that is not Local and the same limiter on a Local store (no
// cache, the oracle) on one random timeline, each request under a limit
// chosen at random (as plans and LimitFuncs choose them): every decision
// must be the same, Retry-After too: 1,000 requests a timeline, or 3,000
// with RATELIMIT_SLOW_TESTS.
func TestDenyCacheAcrossLimitsIsExact(t *testing.T) {
	sizes := []int{2, 5, 9}
	algorithms := []struct {
		name  string
		limit func(int) ratelimit.Limit
	}{
		{"token bucket", func(n int) ratelimit.Limit { return ratelimit.PerSecond(n) }},
		{"token bucket with burst", func(n int) ratelimit.Limit { return ratelimit.PerSecond(10).WithBurst(n) }},
		{"fixed window", func(n int) ratelimit.Limit {
			return ratelimit.Limit{Rate: n, Period: time.Second, Algorithm: ratelimit.FixedWindow}
		}},
		{"sliding window", func(n int) ratelimit.Limit {
			return ratelimit.Limit{Rate: n, Period: time.Second, Algorithm: ratelimit.SlidingWindow}
		}},
	}
	for _, way := range overridePolicies {
		for _, alg := range algorithms {
			t.Run(way.name+", "+alg.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					policy := ratelimit.WithPolicy(way.policy(alg.limit, sizes...))
					oracleStore := memory.New(memory.WithSweepInterval(0))
					oracle, err := ratelimit.New(oracleStore, ratelimit.PerSecond(1000), ratelimit.WithName("a"), policy)
					if err != nil {
						t.Fatal(err)
					}
					cached, err := ratelimit.New(calendarRemote{memory.New(memory.WithSweepInterval(0))}, ratelimit.PerSecond(1000), ratelimit.WithName("a"), policy, ratelimit.WithPlainKeys())
					if err != nil {
						t.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(7, 9))
					requests := sized(3000, 1000)
					for i := range requests {
						time.Sleep(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))
						ctx := withRequestLimit(context.Background(), sizes[rng.IntN(len(sizes))])
						got, err := cached.Allow(ctx, "user:1")
						if err != nil {
							t.Fatal(err)
						}
						want, err := oracle.Allow(ctx, "user:1")
						if err != nil {
							t.Fatal(err)
						}
						if got.Allowed != want.Allowed || got.Allowed && got.Remaining != want.Remaining {
							t.Fatalf("request %d: %+v, the oracle says %+v", i, got, want)
						}
						if !got.Allowed && (got.RetryAfter-want.RetryAfter > time.Microsecond || want.RetryAfter-got.RetryAfter > 2*time.Microsecond) {
							t.Fatalf("request %d: RetryAfter %v, the oracle says %v", i, got.RetryAfter, want.RetryAfter)
						}
					}
				})
			})
		}
	}
}

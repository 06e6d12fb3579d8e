package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// fleetOf returns n limiters over one Redis, each with a store of its own,
// as n app servers would have. Their time budget is a minute: these tests
// are about what the fleet shares, not about a slow store.
func fleetOf(t *testing.T, s server, n int, limit ratelimit.Limit, opts ...ratelimit.Option) []*ratelimit.Limiter {
	t.Helper()
	c, pre := s.client(t), prefix(t)
	var ls []*ratelimit.Limiter
	for range n {
		l, err := ratelimit.New(redisstore.New(c, redisstore.WithPrefix(pre)), limit,
			append(opts, ratelimit.WithName("login"), ratelimit.WithKeySecret([]byte("the fleet's secret")), ratelimit.WithTimeout(time.Minute), ratelimit.WithLogger(testLogger(t)))...)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// TestBlockAcrossAppServers: a block one app server starts holds on
// another, which never saw the denial: its wait is the block's, not the
// budget's.
func TestBlockAcrossAppServers(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			ls := fleetOf(t, s, 2, ratelimit.PerHour(2), ratelimit.WithBlock(2*time.Hour))
			ctx := context.Background()
			for i, want := range []bool{true, true, false} {
				if res, err := ls[0].Allow(ctx, "user:ann"); err != nil || res.Allowed != want {
					t.Fatalf("request %d: %+v, %v", i+1, res, err)
				}
			}
			res, err := ls[1].Allow(ctx, "user:ann")
			if err != nil || res.Allowed || res.RetryAfter < 119*time.Minute {
				t.Fatalf("the other server: %+v, %v; want denied for the block's 2h", res, err)
			}
			if err := ls[1].Reset(ctx, "user:ann"); err != nil {
				t.Fatal(err)
			}
			if res, err := ls[1].Allow(ctx, "user:ann"); err != nil || !res.Allowed {
				t.Fatalf("after Reset: %+v, %v", res, err)
			}
		})
	}
}

// TestChargeAcrossAppServers: a charge one app server takes leaves the
// bucket in debt for every other.
func TestChargeAcrossAppServers(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			ls := fleetOf(t, s, 2, ratelimit.PerHour(10))
			ctx := context.Background()
			if _, err := ls[0].Allow(ctx, "user:bo"); err != nil {
				t.Fatal(err)
			}
			if err := ls[0].Charge(ctx, "user:bo", 500); err != nil {
				t.Fatal(err)
			}
			// 9 left, 10 charged: −1, and one more token in 12 minutes.
			res, err := ls[1].Allow(ctx, "user:bo")
			if err != nil || res.Allowed || res.RetryAfter < 11*time.Minute || res.RetryAfter > 12*time.Minute {
				t.Fatalf("the other server: %+v, %v; want denied for 12 minutes", res, err)
			}
		})
	}
}

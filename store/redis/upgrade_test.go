package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestUpgradeTakesEffectAtOnce is go-chi/httprate's TestOverrideRequestLimit
// through a Limiter on Redis (so with its deny cache): one key under a
// window of 3, then the request's plan raises it to 5, back to 3, then to
// 6. A cached denial holds only for the limit it was decided under, so a
// raised limit takes effect on the next request.
func TestUpgradeTakesEffectAtOnce(t *testing.T) {
	window := func(n int) ratelimit.Limit { // an hour: the test never spans two
		return ratelimit.Limit{Rate: n, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	}
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			l, err := ratelimit.New(redisstore.New(s.client(t), redisstore.WithPrefix(prefix(t))), ratelimit.PerSecond(1000),
				ratelimit.WithName("api"), ratelimit.WithPlainKeys(), ratelimit.WithTimeout(10*time.Second), // a loaded machine is not the case here
				ratelimit.WithPolicy(ratelimit.Policy{Name: "quota", Plans: []ratelimit.Plan{
					{Name: "n3", Limit: window(3)}, {Name: "n5", Limit: window(5)}, {Name: "n6", Limit: window(6)},
				}}))
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []struct {
				plan    string
				allowed []bool
			}{
				{"n3", []bool{true, true, true, false}},
				{"n5", []bool{true, true, false}},
				{"n3", []bool{false}},
				{"n6", []bool{true, false}},
			} {
				ctx := ratelimit.ContextWithPlan(context.Background(), step.plan)
				for i, want := range step.allowed {
					res, err := l.Allow(ctx, "user:1")
					if err != nil || res.Allowed != want {
						t.Fatalf("plan %s, request %d: %+v, %v; want allowed %v", step.plan, i+1, res, err, want)
					}
				}
			}
		})
	}
}

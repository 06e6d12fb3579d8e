package main

import (
	"net/http"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The API's plans: each key is free unless the app knows it as pro. A real
// service looks the key up in its database (or its auth token names the
// plan); the example calls every key that starts with "pro-" pro.
var (
	minutePlans = []ratelimit.Plan{
		{Name: "free", Limit: ratelimit.PerMinute(60)},
		{Name: "pro", Limit: ratelimit.PerMinute(600)},
	}
	// dailyPlans are the daily quotas, reset at midnight of the zone.
	dailyPlans = func(zone *time.Location) []ratelimit.Plan {
		return []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerDay(1000, zone)},
			{Name: "pro", Limit: ratelimit.PerDay(100_000, zone)},
		}
	}
)

// planOf is the plan of an API key: the app's authentication, in one line.
func planOf(apiKey string) string {
	if strings.HasPrefix(apiKey, "pro-") {
		return "pro"
	}
	return "free"
}

// withPlan puts the plan of the request's API key in its context, where the
// limiter's plans read it.
func withPlan(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := ratelimit.ContextWithPlan(r.Context(), planOf(r.Header.Get("X-API-Key")))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// newAPI is the /api/ limiter: per plan, 60 or 600 a minute and 1,000 or
// 100,000 a day per API key (else per address); and whatever keys it
// invents, an address gets at most 120 a minute on the free plan and 1,200
// on pro, never more than 1,200.
func newAPI(store ratelimit.Store, zone *time.Location, ip ratelimit.KeyFunc, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	apiKey := ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ip) // per API key, else per address
	return ratelimit.New(store, ratelimit.PerMinute(1200), append(opts,
		ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ip),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api-per-ip", Key: ip, Plans: ipPlans}),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "plan", Key: apiKey, Plans: minutePlans}),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Key: apiKey, Plans: dailyPlans(zone)}),
		ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithDenyHandler(ratelimit.ProblemJSON()),
	)...)
}

// ipPlans are the ceilings per address.
var ipPlans = []ratelimit.Plan{
	{Name: "free", Limit: ratelimit.PerMinute(120)},
	{Name: "pro", Limit: ratelimit.PerMinute(1200)},
}

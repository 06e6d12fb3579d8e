package main

import (
	"context"
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
		ctx := ratelimit.WithPlan(r.Context(), planOf(r.Header.Get("X-API-Key")))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// apiKey keys /api/ per API key, else per address.
var apiKey = ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())

// newAPI is the /api/ limiter: per plan, 60 or 600 a minute and 1,000 or
// 100,000 a day per API key (else per address); and whatever keys it
// invents, an address gets at most 120 a minute on the free plan and 1,200
// on pro, never more than 1,200.
func newAPI(store ratelimit.Store, zone *time.Location, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	return ratelimit.New(store, ratelimit.PerMinute(1200), append(opts,
		ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.KeyByIP()),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api-per-ip", Key: ratelimit.KeyByIP(), Plans: ipPlans}),
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

// newLogin is the /login limiter: 5 failed attempts an hour per account,
// then the account is blocked for 15 minutes; right passwords never count.
func newLogin(store ratelimit.Store, opts ...ratelimit.Option) (*ratelimit.Limiter, error) {
	return ratelimit.New(store, ratelimit.PerHour(5), append(opts,
		ratelimit.WithName("login"),
		ratelimit.WithKeyFunc(accountKey),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized, http.StatusForbidden)),
		ratelimit.WithBlock(15*time.Minute),
	)...)
}

// accountKey keys a login by its account field (from the query or a form
// of at most 4 KiB: see limitBody).
func accountKey(r *http.Request) (string, error) {
	account := r.FormValue("account")
	if account == "" {
		return "", &ratelimit.MissingKeyError{What: "account", Status: http.StatusBadRequest}
	}
	return "account:" + account, nil
}

// limitBody bounds the body a handler reads.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

// loginHandler accepts the demo password for every account.
var loginHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("password") != "correct-horse" {
		http.Error(w, "wrong account or password", http.StatusUnauthorized)
		return
	}
	w.Write([]byte("welcome\n"))
})

// resetHandler is support's "unblock this customer": POST
// /admin/reset?api_key=K or ?account=A resets that key's budgets at once.
// It answers only the loopback interface (a real service puts it behind
// its own authentication).
func resetHandler(api, login *ratelimit.Limiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fromLoopback(r) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		var err error
		q := r.URL.Query()
		switch {
		case q.Get("api_key") != "":
			err = api.Reset(context.WithoutCancel(r.Context()), "x-api-key:"+q.Get("api_key"))
		case q.Get("account") != "":
			err = login.Reset(context.WithoutCancel(r.Context()), "account:"+q.Get("account"))
		default:
			http.Error(w, "want api_key= or account=", http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, "reset failed", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("reset\n"))
	})
}

// fromLoopback reports whether r came over the loopback interface.
func fromLoopback(r *http.Request) bool {
	host := r.RemoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return host == "127.0.0.1" || host == "[::1]"
}

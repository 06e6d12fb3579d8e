package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleWithPolicy() {
	// 60 per minute per API key (else per address), and whatever keys it
	// sends, no address gets more than 120 per minute: all or nothing.
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerMinute(60), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "per-ip", Limit: ratelimit.PerMinute(120), Key: ratelimit.KeyByIP()}),
		ratelimit.WithHeaders(ratelimit.HeadersIETF),
	)
	if err != nil {
		panic(err)
	}
	h := api.Handler(hello)
	passed := 0
	for i := range 300 {
		r, _ := http.NewRequest("GET", "/api/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-API-Key", fmt.Sprint("invented-", i))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			passed++
		}
	}
	fmt.Println(passed, "of 300 passed")
	// Output:
	// 120 of 300 passed
}

func ExampleViolatedPolicies() {
	store := memory.New()
	defer store.Close()
	deny := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "over "+strings.Join(ratelimit.ViolatedPolicies(r), ", "), http.StatusTooManyRequests)
	})
	h := ratelimit.Middleware(store, ratelimit.PerSecond(5), ratelimit.WithName("burst"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(2)}),
		ratelimit.WithDenyHandler(deny))(hello)
	for range 3 {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", w.Body.String())
		if w.Code == http.StatusOK {
			fmt.Println()
		}
	}
	// Output:
	// 200 hello
	// 200 hello
	// 429 over hourly
}

func ExampleAllowAll() {
	// Two limits on one client, decided as one: the second denies, so the
	// first keeps its token.
	store := memory.New()
	defer store.Close()
	takes := []ratelimit.Take{
		{Key: "api/user:7", Limit: ratelimit.PerSecond(10), N: 1},
		{Key: "api#daily/user:7", Limit: ratelimit.Limit{Rate: 1, Period: 24 * time.Hour}, N: 1},
	}
	results := make([]ratelimit.Result, len(takes))
	for range 2 {
		if err := ratelimit.AllowAll(context.Background(), store, takes, results); err != nil {
			panic(err)
		}
		fmt.Println(results[0].Allowed, results[0].Remaining, results[1].Allowed)
	}
	// Output:
	// true 9 true
	// true 9 false
}

func ExampleLimiter_String() {
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(20), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(1000)}))
	if err != nil {
		panic(err)
	}
	fmt.Println(l)
	// Output:
	// api: 10 per 1s, burst 20; hourly: 1000 per 1h
}

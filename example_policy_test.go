package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

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

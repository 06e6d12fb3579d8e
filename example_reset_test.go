package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleLimiter_Reset() {
	store := memory.New()
	defer store.Close()
	api, _ := ratelimit.New(store, ratelimit.PerDay(2, nil), ratelimit.WithName("api"))
	ctx := context.Background()
	for range 3 {
		api.Allow(ctx, "customer-9")
	}
	res, _ := api.AllowN(ctx, "customer-9", 0)
	fmt.Println("before:", res.Allowed, res.Remaining)
	api.Reset(ctx, "customer-9") // support: "unblock this customer"
	res, _ = api.AllowN(ctx, "customer-9", 0)
	fmt.Println("after:", res.Allowed, res.Remaining)
	// Output:
	// before: true 0
	// after: true 2
}

func ExampleLimiter_AllowN_report() {
	store := memory.New()
	defer store.Close()
	api, _ := ratelimit.New(store, ratelimit.PerMinute(60), ratelimit.WithName("api"))
	api.AllowN(context.Background(), "customer-9", 10)
	res, _ := api.AllowN(context.Background(), "customer-9", 0) // takes nothing
	fmt.Println(res.Remaining)
	// Output: 50
}

func ExampleWithBlock() {
	// 5 attempts a minute per address; the sixth blocks it for 15 minutes,
	// even once its budget is back.
	store := memory.New()
	defer store.Close()
	login, _ := ratelimit.New(store, ratelimit.PerMinute(5), ratelimit.WithName("login"),
		ratelimit.WithBlock(15*time.Minute))
	h := login.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i := range 7 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
		if w.Code != http.StatusOK {
			fmt.Println(i+1, w.Code, "Retry-After", w.Header().Get("Retry-After"))
		}
	}
	// Output:
	// 6 429 Retry-After 900
	// 7 429 Retry-After 900
}

func ExampleResetter() {
	var store ratelimit.Store = memory.New()
	_, ok := store.(ratelimit.Resetter)
	fmt.Println(ok)
	// Output: true
}

func ExampleWithDenyCacheMaxAge() {
	// Support resets customers from any app server: every other app server
	// serves a reset customer again within 2 s (10 s by default), at one
	// store call per 2 s per denied key that keeps asking.
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerDay(1000, nil), ratelimit.WithName("api"),
		ratelimit.WithDenyCache(65_536), ratelimit.WithDenyCacheMaxAge(2*time.Second))
	fmt.Println(api, err)
	// Output: api: 1000 per day (UTC) <nil>
}

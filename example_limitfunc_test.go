package ratelimit_test

import (
	"context"
	"fmt"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExamplePolicy_limitFunc() {
	// Each customer's contract, as the app caches it from its database.
	contracts := map[string]int{"acme": 2, "globex": 5}
	type customerKey struct{}
	store := memory.New()
	defer store.Close()
	api, _ := ratelimit.New(store, ratelimit.PerSecond(100), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "contract", LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
			return ratelimit.PerMinute(contracts[ctx.Value(customerKey{}).(string)]), nil
		}}))
	for _, customer := range []string{"acme", "globex"} {
		ctx := context.WithValue(context.Background(), customerKey{}, customer)
		passed := 0
		for range 10 {
			if res, _ := api.Allow(ctx, customer); res.Allowed {
				passed++
			}
		}
		fmt.Println(customer, passed)
	}
	// Output:
	// acme 2
	// globex 5
}

func ExamplePolicy_algorithm() {
	// Daily quotas from each customer's contract: calendar days count in a
	// fixed window, so the policy says so, and every limit its LimitFunc
	// returns is one.
	quotas := map[string]int{"acme": 2, "globex": 3}
	type customerKey struct{}
	store := memory.New()
	defer store.Close()
	api, _ := ratelimit.New(store, ratelimit.PerSecond(100), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Algorithm: ratelimit.FixedWindow,
			LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
				return ratelimit.PerDay(quotas[ctx.Value(customerKey{}).(string)], nil), nil
			}}))
	for _, customer := range []string{"acme", "globex"} {
		ctx := context.WithValue(context.Background(), customerKey{}, customer)
		passed := 0
		for range 5 {
			if res, _ := api.Allow(ctx, customer); res.Allowed {
				passed++
			}
		}
		fmt.Println(customer, passed)
	}
	// Output:
	// acme 2
	// globex 3
}

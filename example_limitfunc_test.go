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

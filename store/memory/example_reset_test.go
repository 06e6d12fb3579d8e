package memory_test

import (
	"context"
	"fmt"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleStore_Reset() {
	store := memory.New()
	defer store.Close()
	ctx, l := context.Background(), ratelimit.PerHour(1)
	store.AllowN(ctx, "customer-9", l, 1)
	store.Reset(ctx, "customer-9", l)
	res, _ := store.AllowN(ctx, "customer-9", l, 0) // a report
	fmt.Println(res.Remaining)
	// Output: 1
}

func ExampleStore_Calendars() {
	store := memory.New()
	defer store.Close()
	res, _ := store.AllowN(context.Background(), "customer-9", ratelimit.PerDay(1000, nil), 1)
	fmt.Println(store.Calendars(), res.Remaining)
	// Output: true 999
}

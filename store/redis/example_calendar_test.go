package redisstore_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

func ExampleStore_Reset() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer client.Close()
	store := redisstore.New(client)
	ctx, l := context.Background(), ratelimit.PerHour(1)

	store.AllowN(ctx, "customer-9", l, 1)
	res, _ := store.AllowN(ctx, "customer-9", l, 1)
	fmt.Println(res.Allowed)
	store.Reset(ctx, "customer-9", l) // support: "unblock this customer"
	res, _ = store.AllowN(ctx, "customer-9", l, 1)
	fmt.Println(res.Allowed)
	// Output:
	// false
	// true
}

func ExampleStore_Calendars() {
	var store ratelimit.Store = new(redisstore.Store)
	c, ok := store.(ratelimit.Calendars)
	fmt.Println(ok && c.Calendars())
	// Output: true
}

package redisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

func ExampleNew() {
	mr := miniredis.NewMiniRedis() // stands in for a real server here
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()

	client := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer client.Close()
	store := redisstore.New(client)

	for range 3 {
		res, err := store.AllowN(context.Background(), "user:7", ratelimit.PerMinute(2), 1)
		fmt.Println(res.Allowed, res.Remaining, err)
	}
	fmt.Println(mr.Keys())
	// Output:
	// true 1 <nil>
	// true 0 <nil>
	// false 0 <nil>
	// [ratelimit:tb:{7508271d}user:7]
}

// A Redis Cluster is used the same way: every decision touches one key.
func ExampleNew_cluster() {
	client := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
	})
	store := redisstore.New(client, redisstore.WithPrefix("api:"))
	_ = store
}

// For Redis-compatible services that refuse TIME inside scripts.
func ExampleWithAppClock() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer client.Close()

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := redisstore.New(client, redisstore.WithAppClock(func() time.Time { return now }))
	limit := ratelimit.PerSecond(10).WithBurst(1)
	a, _ := store.AllowN(context.Background(), "k", limit, 1)
	b, _ := store.AllowN(context.Background(), "k", limit, 1)
	now = now.Add(b.RetryAfter)
	c, _ := store.AllowN(context.Background(), "k", limit, 1)
	fmt.Println(a.Allowed, b.Allowed, b.RetryAfter, c.Allowed)
	// Output: true false 100ms true
}

// Every decision in a script call of its own, as soon as it is made: for
// services that limit a script's keys, or to compare with the default
// group commit.
func ExampleWithoutBatching() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer client.Close()

	store := redisstore.New(client, redisstore.WithoutBatching())
	res, err := store.AllowN(context.Background(), "k", ratelimit.PerMinute(5), 2)
	fmt.Println(res.Allowed, res.Remaining, err)
	// Output: true 3 <nil>
}

// On a Redis Cluster whose servers are older than Redis 7, or behind a
// proxy that refuses a script's undeclared keys, each master's batch goes
// as a pipeline of one call per slot. (The store also finds this out by
// itself the first time a master refuses the script over its slots.)
func ExampleWithPerSlotBatches() {
	client := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
	})
	store := redisstore.New(client, redisstore.WithPerSlotBatches())
	_ = store
}

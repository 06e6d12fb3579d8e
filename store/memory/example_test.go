package memory_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleNew() {
	store := memory.New() // at most memory.DefaultMaxKeys keys, about 65 MB
	defer store.Close()

	res, err := store.AllowN(context.Background(), "client-1", ratelimit.PerSecond(10), 3)
	fmt.Println(res.Allowed, res.Remaining, err)
	// Output: true 7 <nil>
}

// A controlled clock makes refills testable without sleeping.
func ExampleWithClock() {
	// The store's sweeper reads the clock on a goroutine of its own, so the
	// clock is moved atomically.
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	defer store.Close()
	ctx, limit := context.Background(), ratelimit.PerSecond(10).WithBurst(1)

	first, _ := store.AllowN(ctx, "k", limit, 1)
	second, _ := store.AllowN(ctx, "k", limit, 1)
	now.Add(int64(second.RetryAfter))
	third, _ := store.AllowN(ctx, "k", limit, 1)
	fmt.Println(first.Allowed, second.Allowed, second.RetryAfter, third.Allowed)
	// Output: true false 100ms true
}

// With a bound, a flood of new keys cannot grow the store past it.
func ExampleWithMaxKeys() {
	store := memory.New(memory.WithMaxKeys(100))
	defer store.Close()
	for i := range 10_000 {
		store.AllowN(context.Background(), fmt.Sprint("flood-", i), ratelimit.PerMinute(5), 1)
	}
	fmt.Println(store.Len() <= 100)
	// Output: true
}

func ExampleWithSweepInterval() {
	// Visit every key every 10 seconds and drop those whose budget is full.
	store := memory.New(memory.WithSweepInterval(10 * time.Second))
	defer store.Close()
	fmt.Println(store.Len())
	// Output: 0
}

func ExampleSlots() {
	slots := memory.NewSlots()
	ctx := context.Background()
	a, _ := slots.Acquire(ctx, "export/tenant-1", 1, 0)
	b, _ := slots.Acquire(ctx, "export/tenant-1", 1, 0)
	slots.Release(ctx, "export/tenant-1", a)
	fmt.Println(a.Acquired, b.Acquired, slots.Running("export/tenant-1"))
	// Output: true false 0
}

// A request that turns out not to count (a login that succeeded, a cached
// answer) gives back what its take took: age is how long ago, at most,
// the take was made, measured from before it was sent.
func ExampleStore_RefundN() {
	store := memory.New()
	defer store.Close()
	ctx, limit := context.Background(), ratelimit.PerHour(5)

	sent := time.Now()
	taken, _ := store.AllowN(ctx, "login/alice", limit, 1)
	refunded, _ := store.RefundN(ctx, "login/alice", limit, 1, time.Since(sent))
	fmt.Println(taken.Remaining, refunded.Remaining)
	// Output: 4 5
}

// AllowJoined decides the key prefix+key without making it: the same
// budget as AllowN's of the joined key.
func ExampleStore_AllowJoined() {
	store := memory.New()
	defer store.Close()
	ctx, limit := context.Background(), ratelimit.PerMinute(10)

	store.AllowJoined(ctx, "api/", "client-1", limit, 3)
	res, _ := store.AllowN(ctx, "api/client-1", limit, 1)
	fmt.Println(res.Remaining)
	// Output: 6
}

// AllowJoinedTo is AllowJoined writing its Result where it is told: a
// caller that keeps its Results (as a Limiter keeps its pass's) copies
// none.
func ExampleStore_AllowJoinedTo() {
	store := memory.New()
	defer store.Close()
	ctx, limit := context.Background(), ratelimit.PerMinute(10)

	var res ratelimit.Result
	if err := store.AllowJoinedTo(ctx, "api/", "client-1", &limit, 3, &res); err != nil {
		fmt.Println(err)
	}
	fmt.Println(res.Allowed, res.Remaining)
	// Output: true 7
}

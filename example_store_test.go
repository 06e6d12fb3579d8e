package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// A store checks the arguments of AllowAll as every store does.
func ExampleValidateTakes() {
	takes := []ratelimit.Take{
		{Key: "ip:192.0.2.1", Limit: ratelimit.PerMinute(10), N: 1},
		{Key: "ip:192.0.2.1", Limit: ratelimit.PerHour(100), N: 1},
	}
	err := ratelimit.ValidateTakes(takes, make([]ratelimit.Result, len(takes)))
	fmt.Println(errors.Is(err, ratelimit.ErrDuplicateKey))
	// Output: true
}

// A store checks the arguments of ReserveN as every store does: only a
// token bucket books the future.
func ExampleValidateReserve() {
	err := ratelimit.ValidateReserve("k", ratelimit.PerMinute(10).WithAlgorithm(ratelimit.FixedWindow), 1, time.Second)
	fmt.Println(errors.Is(err, ratelimit.ErrNotTokenBucket))
	// Output: true
}

func ExampleLimit_PerSecondRate() {
	fmt.Println(ratelimit.PerMinute(90).PerSecondRate())
	// Output: 1.5
}

// WaitN waits for n tokens at once: a batch job sends 4 rows a call to an
// API that takes 10 rows a second.
func ExampleLimiter_WaitN() {
	store := memory.New()
	defer store.Close()
	rows, _ := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("rows"))
	for range 2 {
		if err := rows.WaitN(context.Background(), "export", 4); err != nil {
			fmt.Println(err)
			return
		}
	}
	err := rows.WaitN(context.Background(), "export", 11) // more than the bucket holds
	fmt.Println(errors.Is(err, ratelimit.ErrCostExceedsCapacity))
	// Output: true
}

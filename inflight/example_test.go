package inflight_test

import (
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// A lease bounds how long the slot of a crashed instance stays held on a
// shared store; a running request renews its own every third of it. A
// lease out of range is an error.
func ExampleWithLease() {
	_, err := inflight.New(memory.NewSlots(), 2, inflight.WithLease(30*time.Second))
	fmt.Println(err)
	_, err = inflight.New(memory.NewSlots(), 2, inflight.WithLease(time.Millisecond))
	fmt.Println(err)
	// Output:
	// <nil>
	// ratelimit: bad configuration: inflight.WithLease(1ms): want 3ms to 876000h0m0s
}

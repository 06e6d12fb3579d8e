package storetest_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// A store's test file runs the suite in real time.
func ExampleRun() {
	_ = func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) ratelimit.Store {
			s := memory.New()
			t.Cleanup(func() { s.Close() })
			return s
		})
	}
}

// With a clock that the suite sets, every decision is checked exactly.
func ExampleRunWithClock() {
	_ = func(t *testing.T) {
		storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
			// The store's sweeper reads the clock too: set it atomically.
			var now atomic.Int64
			s := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
			t.Cleanup(func() { s.Close() })
			return s, func(t time.Time) { now.Store(t.UnixNano()) }
		})
	}
}

// An inflight.Store, the store of an in-flight limit, has a suite of its own.
func ExampleRunSlots() {
	_ = func(t *testing.T) {
		storetest.RunSlots(t, func(t *testing.T) inflight.Store { return memory.NewSlots() })
	}
}

// A store that decides a token bucket never before its last update, as
// store/redis does with the app servers' clocks, says so; a store slow to
// call replays fewer timelines.
func ExampleNeverRewinds() {
	_ = func(t *testing.T, newStore func(t *testing.T) (ratelimit.Store, func(time.Time))) {
		storetest.RunWithClock(t, newStore, storetest.NeverRewinds(), storetest.Timelines(3))
	}
}

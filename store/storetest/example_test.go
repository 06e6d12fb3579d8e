package storetest_test

import (
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
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
			var now time.Time
			s := memory.New(memory.WithClock(func() time.Time { return now }))
			t.Cleanup(func() { s.Close() })
			return s, func(t time.Time) { now = t }
		})
	}
}

// A SlotStore, the store of an in-flight limit, has a suite of its own.
func ExampleRunSlots() {
	_ = func(t *testing.T) {
		storetest.RunSlots(t, func(t *testing.T) ratelimit.SlotStore { return memory.NewSlots() })
	}
}

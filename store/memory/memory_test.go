package memory_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// clock is a settable clock for memory.WithClock.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

func newClock() *clock {
	c := &clock{}
	c.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return c
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ratelimit.Store {
		s := memory.New()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestConformanceWithClock(t *testing.T) {
	storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
		c := newClock()
		s := memory.New(memory.WithClock(c.Now))
		t.Cleanup(func() { s.Close() })
		return s, c.Set
	})
}

func TestMaxKeysIsNeverExceeded(t *testing.T) {
	for _, max := range []int{1, 7, 100, 1000, 5000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			c := newClock()
			s := memory.New(memory.WithClock(c.Now), memory.WithMaxKeys(max), memory.WithSweepInterval(0))
			defer s.Close()
			for i := range 3 * max {
				if _, err := s.AllowN(context.Background(), fmt.Sprint("flood-", i), ratelimit.PerHour(10), 1); err != nil {
					t.Fatal(err)
				}
				if n := s.Len(); n > max {
					t.Fatalf("after %d new keys the store holds %d, bound %d", i+1, n, max)
				}
			}
			if n := s.Len(); n < max/2 {
				t.Fatalf("store holds %d keys after a flood, want close to the bound %d", n, max)
			}
		})
	}
}

func TestMaxKeysForgetsLimitedClientsLast(t *testing.T) {
	c := newClock()
	const max = 1000
	s := memory.New(memory.WithClock(c.Now), memory.WithMaxKeys(max), memory.WithSweepInterval(0))
	defer s.Close()
	ctx := context.Background()
	l := ratelimit.PerMinute(10)
	// A limited client: its budget is spent.
	if res, _ := s.AllowN(ctx, "abuser", l, 10); !res.Allowed {
		t.Fatal("first call denied")
	}
	// A flood of new keys, each taking one token: all closer to full.
	for i := range 10 * max {
		if _, err := s.AllowN(ctx, fmt.Sprint("flood-", i), l, 1); err != nil {
			t.Fatal(err)
		}
	}
	if res, _ := s.AllowN(ctx, "abuser", l, 1); res.Allowed {
		t.Fatal("the limited client was forgotten by the flood and got a fresh budget")
	}
}

func TestIdleKeysAreDropped(t *testing.T) {
	c := newClock()
	s := memory.New(memory.WithClock(c.Now), memory.WithSweepInterval(time.Millisecond))
	defer s.Close()
	l := ratelimit.PerSecond(10)
	for i := range 1000 {
		s.AllowN(context.Background(), fmt.Sprint(i), l, 1)
	}
	if n := s.Len(); n != 1000 {
		t.Fatalf("Len = %d, want 1000", n)
	}
	c.Add(time.Second) // every bucket refilled: the keys are idle
	deadline := time.Now().Add(10 * time.Second)
	for s.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d after every bucket is full again, want 0", n)
	}
}

func TestHousekeepingStallsNoRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a million keys; run without -short")
	}
	c := newClock()
	s := memory.New(memory.WithClock(c.Now), memory.WithSweepInterval(200*time.Millisecond))
	defer s.Close()
	ctx := context.Background()
	l := ratelimit.PerSecond(10)
	for i := range 1_000_000 {
		s.AllowN(ctx, "idle-"+fmt.Sprint(i), l, 1)
	}
	c.Add(time.Minute) // all of them become droppable at once

	// One caller, so that a free core is always there for it: with more
	// runnable goroutines than cores the Go scheduler alone can hold a
	// goroutine back for its 10 ms time slice, housekeeping or not.
	var worst atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				s.AllowN(ctx, fmt.Sprint("hot-", w, "-", i%1000), l, 1)
				if d := int64(time.Since(start)); d > worst.Load() {
					worst.Store(d)
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Len() > 2000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if n := s.Len(); n > 2000 {
		t.Fatalf("sweeper left %d keys", n)
	}
	t.Logf("slowest AllowN while a million idle keys were dropped: %v", time.Duration(worst.Load()))
	if w := time.Duration(worst.Load()); stallBound > 0 && w > stallBound {
		t.Fatalf("one AllowN took %v while keys were swept, want at most %v", w, stallBound)
	}
}

package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// refundLimits are a limit of each algorithm, and a calendar quota, with
// room for every call of the tests and benchmarks below.
func refundLimits(t testing.TB) []struct {
	name string
	l    ratelimit.Limit
} {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		l    ratelimit.Limit
	}{
		{"token bucket", ratelimit.PerHour(1 << 20).WithBurst(1 << 30)}, // a token every 3.4 ms
		{"fixed window", ratelimit.Limit{Rate: 1 << 30, Period: time.Hour, Algorithm: ratelimit.FixedWindow}},
		{"per day Europe/Berlin", ratelimit.PerDay(1<<30, berlin)},
		{"sliding window", ratelimit.Limit{Rate: 1 << 30, Period: time.Hour, Algorithm: ratelimit.SlidingWindow}},
		{"sliding log", ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate, Period: time.Hour, Algorithm: ratelimit.SlidingLog}},
	}
}

// TestRefundNDoesNotAllocate: a take and its refund on a key the store
// holds cost no allocation, whatever the algorithm.
func TestRefundNDoesNotAllocate(t *testing.T) {
	for _, c := range refundLimits(t) {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			s := memory.New(memory.WithClock(clk.Now))
			defer s.Close()
			ctx := context.Background()
			s.AllowN(ctx, "k", c.l, 1)    // an entry the refunds below leave alone
			clk.Add(2 * time.Millisecond) // older than the refunds' age
			allocs := testing.AllocsPerRun(1000, func() {
				s.AllowN(ctx, "k", c.l, 1)
				if _, err := s.RefundN(ctx, "k", c.l, 1, time.Millisecond); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per take and refund, want 0", allocs)
			}
			if res, _ := s.AllowN(ctx, "k", c.l, 0); res.Remaining != c.l.Capacity()-1 {
				t.Fatalf("after the refunds Remaining = %d, want %d: each refund gives back its take", res.Remaining, c.l.Capacity()-1)
			}
		})
	}
}

// TestRefundNKeepsNoState: a refund on a key the store does not hold
// writes nothing; one that empties a sliding log drops the key, as the
// sweeper would.
func TestRefundNKeepsNoState(t *testing.T) {
	clk := newClock()
	s := memory.New(memory.WithClock(clk.Now))
	defer s.Close()
	ctx := context.Background()
	for _, c := range refundLimits(t) {
		if _, err := s.RefundN(ctx, "never", c.l, 1, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("refunds on keys never seen left %d keys, want 0", n)
	}
	l := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: ratelimit.SlidingLog}
	s.AllowN(ctx, "log", l, 2)
	s.RefundN(ctx, "log", l, 1, 0)
	if n := s.Len(); n != 1 {
		t.Fatalf("a log with a token left: %d keys, want 1", n)
	}
	s.RefundN(ctx, "log", l, 1, 0)
	if n := s.Len(); n != 0 {
		t.Fatalf("an emptied log: %d keys, want 0", n)
	}
}

// BenchmarkRefund is a take and its refund, the settle of a request that
// does not count, on an existing key of each algorithm; it must not
// allocate. BenchmarkHotKey is the take alone.
func BenchmarkRefund(b *testing.B) {
	for _, c := range refundLimits(b) {
		b.Run(c.name, func(b *testing.B) {
			s := memory.New()
			defer s.Close()
			ctx := context.Background()
			s.AllowN(ctx, "hot", c.l, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.AllowN(ctx, "hot", c.l, 1)
				s.RefundN(ctx, "hot", c.l, 1, time.Millisecond)
			}
		})
	}
}

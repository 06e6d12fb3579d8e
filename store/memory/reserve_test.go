package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// BenchmarkReserveVsAllowN is ReserveN (no wait, as AllowN decides) and
// AllowN on one existing key in one run, the loops taking turns in slices
// of 1,000 calls (each first every other turn) so that a noisy machine
// slows both alike; it reports the
// ratio of their times (reserve/allow).
func BenchmarkReserveVsAllowN(b *testing.B) {
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	s.AllowN(ctx, "a", l, 1)
	s.ReserveN(ctx, "r", l, 1, 0)
	var reserve, allow time.Duration
	b.ReportAllocs()
	reserves := func() time.Duration {
		t0 := time.Now()
		for range 1000 {
			s.ReserveN(ctx, "r", l, 1, 0)
		}
		return time.Since(t0)
	}
	allows := func() time.Duration {
		t0 := time.Now()
		for range 1000 {
			s.AllowN(ctx, "a", l, 1)
		}
		return time.Since(t0)
	}
	odd := false
	for b.Loop() {
		// Each goes first every other turn: neither pays for the other.
		if odd {
			reserve += reserves()
			allow += allows()
		} else {
			allow += allows()
			reserve += reserves()
		}
		odd = !odd
	}
	b.ReportMetric(float64(reserve)/float64(allow), "reserve/allow")
	b.ReportMetric(float64(reserve)/float64(b.N*1000), "ns/reserve")
	b.ReportMetric(float64(allow)/float64(b.N*1000), "ns/allow")
}

// TestReserveNDoesNotAllocate: a booking on a key the store holds costs
// no allocation, as AllowN's.
func TestReserveNDoesNotAllocate(t *testing.T) {
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	s.ReserveN(ctx, "r", l, 1, 0)
	if n := testing.AllocsPerRun(1000, func() { s.ReserveN(ctx, "r", l, 1, time.Second) }); n != 0 {
		t.Fatalf("ReserveN allocates %v times a call", n)
	}
}

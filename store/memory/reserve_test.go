package memory_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
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

// BenchmarkReserveVsAllowNManyKeys is ReserveN, with no wait (bound 0) and
// with a bound of a second, against AllowN on 100,000 existing keys whose
// budgets never run out, from 1 and 64 goroutines, in one run: the three
// take turns in slices of 100,000 decisions, each first in its turn once
// in three, and the ratios of ReserveN's times to AllowN's are reported
// (reserve0/allow, reserve1s/allow).
func BenchmarkReserveVsAllowNManyKeys(b *testing.B) {
	const keys, slice = 100_000, 100_000
	s := memory.New()
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(1e9)
	allowNames, reserveNames, waitNames := make([]string, keys), make([]string, keys), make([]string, keys)
	for i := range keys {
		k := "client-" + strconv.Itoa(i)
		allowNames[i], reserveNames[i], waitNames[i] = "a/"+k, "r/"+k, "w/"+k
		s.AllowN(ctx, allowNames[i], l, 1)
		s.ReserveN(ctx, reserveNames[i], l, 1, 0)
		s.ReserveN(ctx, waitNames[i], l, 1, time.Second)
	}
	loads := []struct {
		name string
		f    func(i int)
	}{
		{"allow", func(i int) { s.AllowN(ctx, allowNames[i%keys], l, 1) }},
		{"reserve0", func(i int) { s.ReserveN(ctx, reserveNames[i%keys], l, 1, 0) }},
		{"reserve1s", func(i int) { s.ReserveN(ctx, waitNames[i%keys], l, 1, time.Second) }},
	}
	for _, par := range []int{1, 64} {
		b.Run("goroutines="+strconv.Itoa(par), func(b *testing.B) {
			spent := make([]time.Duration, len(loads))
			run := func(f func(int)) {
				var next atomic.Int64
				if par == 1 {
					for i := range slice {
						f(i * 7919)
					}
					return
				}
				var wg sync.WaitGroup
				for range par {
					wg.Go(func() {
						for i := int(next.Add(1)); i <= slice; i = int(next.Add(1)) {
							f(i * 7919)
						}
					})
				}
				wg.Wait()
			}
			for k := 0; b.Loop(); k++ {
				for j := range loads {
					i := (j + k) % len(loads)
					t0 := time.Now()
					run(loads[i].f)
					spent[i] += time.Since(t0)
				}
			}
			for i, ld := range loads {
				b.ReportMetric(float64(spent[i])/float64(b.N*slice), ld.name+"-ns/op")
				if i > 0 {
					b.ReportMetric(float64(spent[i])/float64(spent[0]), ld.name+"/allow")
				}
			}
		})
	}
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

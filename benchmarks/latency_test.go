package benchmarks

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// histogram counts latencies in buckets of at most 1/32 of their value
// (about 3%), so a quantile costs no sorting and a decision no allocation.
// Below 64 ns a bucket is one nanosecond wide.
type histogram struct {
	counts [64 + 58*32]uint32
	n      uint64
}

// bucket returns the index of ns.
func bucket(ns uint64) int {
	if ns < 64 {
		return int(ns)
	}
	e := bits.Len64(ns) - 1 // 6 and up
	sub := (ns >> (e - 5)) & 31
	return 64 + (e-6)*32 + int(sub)
}

// bounds returns the smallest and one past the largest value of bucket i.
func bounds(i int) (lo, hi uint64) {
	if i < 64 {
		return uint64(i), uint64(i) + 1
	}
	e := (i-64)/32 + 6
	sub := uint64((i - 64) % 32)
	return (32 + sub) << (e - 5), (33 + sub) << (e - 5)
}

func (h *histogram) add(d time.Duration) {
	ns := uint64(max(d, 0))
	h.counts[min(bucket(ns), len(h.counts)-1)]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the middle of the bucket that holds the q-th latency
// (0 < q <= 1), or 0 if h is empty.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		if seen += uint64(c); seen >= rank {
			lo, hi := bounds(i)
			return time.Duration((lo + hi - 1) / 2)
		}
	}
	return 0 // unreachable: the counts sum to n
}

// drive times b.N calls of call from g goroutines, each walking names
// round-robin from its own starting point, with b's timer running only
// over the calls, and returns their latencies. check is given each call's
// answer after its latency is taken, outside it.
func drive(b *testing.B, g int, names []string, call func(context.Context, string) (bool, error), check func(ok bool, err error)) histogram {
	ctx := context.Background()
	hists := make([]histogram, g)
	var next atomic.Int64
	var wg sync.WaitGroup
	n := int64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for gi := range g {
		wg.Go(func() {
			h := &hists[gi]
			i := gi * 157 % len(names)
			for next.Add(1) <= n {
				start := time.Now()
				ok, err := call(ctx, names[i])
				h.add(time.Since(start))
				check(ok, err)
				if i++; i == len(names) {
					i = 0
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	var all histogram
	for i := range hists {
		all.merge(&hists[i])
	}
	return all
}

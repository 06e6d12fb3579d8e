package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

var algorithms = []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog}

// burst is n requests at one instant.
type burst struct {
	at time.Duration
	n  int
}

// worstWindow sends the bursts in order and returns the most requests
// admitted within any span of one period.
func worstWindow(t *testing.T, l ratelimit.Limit, bursts []burst) int {
	t.Helper()
	c := newClock()
	start := c.Now()
	s := memory.New(memory.WithClock(c.Now), memory.WithSweepInterval(0))
	defer s.Close()
	var admitted []time.Time
	for _, b := range bursts {
		c.Set(start.Add(b.at))
		for range b.n {
			res, err := s.AllowN(context.Background(), "k", l, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Allowed {
				admitted = append(admitted, c.Now())
			}
		}
	}
	worst, lo := 0, 0
	for hi := range admitted {
		for !admitted[lo].After(admitted[hi].Add(-l.Period)) {
			lo++
		}
		worst = max(worst, hi-lo+1)
	}
	return worst
}

// patterns are the clients TestAccuracy tries, for windows of one second
// at a rate of 100: greedy (a request every millisecond), bursts just before
// and at window edges, and bursts at the end of a window then mid-way
// through the next (the sliding window counter's weak spot).
func patterns() map[string][]burst {
	const s, ms = time.Second, time.Millisecond
	greedy := []burst{}
	for at := time.Duration(0); at < 10*s; at += ms {
		greedy = append(greedy, burst{at, 1})
	}
	var edges, lateThenMid []burst
	for k := time.Duration(1); k <= 5; k++ {
		edges = append(edges, burst{3*k*s - ms, 200}, burst{3 * k * s, 200})
		lateThenMid = append(lateThenMid, burst{3*k*s - ms, 200})
		for at := 3 * k * s; at < 3*k*s+s; at += 10 * ms {
			lateThenMid = append(lateThenMid, burst{at, 10})
		}
	}
	return map[string][]burst{"greedy": greedy, "edges": edges, "late then mid-way": lateThenMid}
}

// TestAccuracy measures each algorithm's worst case over the patterns: the
// most requests admitted within any one period at 100 per second.
// docs/algorithms.md quotes it.
func TestAccuracy(t *testing.T) {
	const rate = 100
	for _, tt := range []struct {
		a       ratelimit.Algorithm
		atLeast int // what the algorithm is known to allow
		atMost  int
	}{
		{ratelimit.TokenBucket, 2*rate - 1, 2 * rate}, // a full burst, then the refill of one period
		{ratelimit.FixedWindow, 2 * rate, 2 * rate},   // two windows' worth across an edge
		{ratelimit.SlidingWindow, rate + 1, 2 * rate}, // the estimate assumes an even spread
		{ratelimit.SlidingLog, rate, rate},            // exact
	} {
		l := ratelimit.Limit{Rate: rate, Period: time.Second, Algorithm: tt.a}
		worst, by := 0, ""
		for name, p := range patterns() {
			if w := worstWindow(t, l, p); w > worst {
				worst, by = w, name
			}
		}
		t.Logf("%-14v worst case: %d admitted within one period of rate %d (%s)", tt.a, worst, rate, by)
		if worst < tt.atLeast || worst > tt.atMost {
			t.Errorf("%v: %d admitted within one period, want %d to %d", tt.a, worst, tt.atLeast, tt.atMost)
		}
	}
}

// BenchmarkAlgorithm is AllowN on one existing key for each algorithm; the
// window algorithms refill on their own, so every call decides for real.
func BenchmarkAlgorithm(b *testing.B) {
	for _, a := range algorithms {
		b.Run(a.String(), func(b *testing.B) {
			s := memory.New()
			defer s.Close()
			ctx := context.Background()
			l := ratelimit.Limit{Rate: 1000, Period: time.Second, Algorithm: a}
			s.AllowN(ctx, "hot", l, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.AllowN(ctx, "hot", l, 1)
			}
		})
	}
}

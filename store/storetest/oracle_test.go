package storetest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestWindowModel checks the oracle itself on hand-worked timelines.
func TestWindowModel(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms, n     int
		allowed   bool
		remaining int
	}
	tests := []struct {
		name  string
		a     ratelimit.Algorithm
		steps []step
	}{
		{"fixed window resets at the edge", ratelimit.FixedWindow, []step{
			{999, 3, true, 0}, {999, 1, false, 0}, {1000, 3, true, 0},
		}},
		{"sliding log counts the trailing period", ratelimit.SlidingLog, []step{
			// (now − 1 s, now]: the entry at 0 ms leaves at 1000 ms, the one at 500 ms at 1500 ms
			{0, 2, true, 1}, {500, 1, true, 0}, {999, 1, false, 0}, {1000, 1, true, 1},
			{1400, 1, true, 0}, {1450, 1, false, 0}, {1500, 1, true, 0},
		}},
		{"sliding window weighs the previous window", ratelimit.SlidingWindow, []step{
			// 3 in window 0; at 1.5 s the estimate is 3·0.5 = 1.5, room for 1;
			// at 1.9 s it is 3·0.1 + 1 = 1.3, so 1 left
			{100, 3, true, 0}, {1500, 1, true, 0}, {1500, 1, false, 0}, {1900, 0, true, 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &windowModel{l: ratelimit.Limit{Rate: 3, Period: time.Second, Algorithm: tt.a}}
			for i, s := range tt.steps {
				ok, rem := m.decide(at(s.ms), s.n)
				if ok != s.allowed || rem != s.remaining {
					t.Fatalf("step %d at %d ms, n %d: allowed %v remaining %d, want %v %d", i, s.ms, s.n, ok, rem, s.allowed, s.remaining)
				}
			}
		})
	}
}

func TestLogUniformStaysInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		if d := logUniform(rng, time.Microsecond, time.Second); d < time.Microsecond-1 || d > time.Second {
			t.Fatalf("logUniform gave %v, outside [1µs, 1s]", d)
		}
	}
}

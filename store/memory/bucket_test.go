package memory

import (
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestTakeTokens drives the token bucket function through fixed instants.
func TestTakeTokens(t *testing.T) {
	l := ratelimit.PerSecond(10).WithBurst(3) // a token every 100 ms
	const ms = int64(time.Millisecond)
	type step struct {
		at        int64 // ms
		n         int
		allowed   bool
		remaining int
		retry     time.Duration
		reset     time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a new bucket is full", []step{
			{0, 0, true, 3, 0, 0},
			{0, 1, true, 2, 0, 100 * time.Millisecond},
		}},
		{"spend the burst, then wait for a token", []step{
			{0, 3, true, 0, 0, 300 * time.Millisecond},
			{0, 1, false, 0, 100 * time.Millisecond, 300 * time.Millisecond},
			{50, 1, false, 0, 50 * time.Millisecond, 250 * time.Millisecond},
			{100, 1, true, 0, 0, 300 * time.Millisecond},
		}},
		{"a denied cost takes nothing", []step{
			{0, 2, true, 1, 0, 200 * time.Millisecond},
			{0, 3, false, 1, 200 * time.Millisecond, 200 * time.Millisecond},
			{0, 1, true, 0, 0, 300 * time.Millisecond},
		}},
		{"refill stops at the burst", []step{
			{0, 3, true, 0, 0, 300 * time.Millisecond},
			{10_000, 0, true, 3, 0, 0},
		}},
		{"a clock going back refills nothing", []step{
			{1000, 3, true, 0, 0, 300 * time.Millisecond},
			{500, 1, false, 0, 100 * time.Millisecond, 300 * time.Millisecond},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c cell
			fresh := true
			for i, s := range tt.steps {
				next, res := takeTokens(c, fresh, s.at*ms, l, s.n)
				if res.Allowed != s.allowed || res.Remaining != s.remaining || res.RetryAfter != s.retry || res.ResetAfter != s.reset {
					t.Fatalf("step %d: got %+v, want allowed %v remaining %d retry %v reset %v",
						i, res, s.allowed, s.remaining, s.retry, s.reset)
				}
				if res.Allowed && s.n > 0 {
					c, fresh = next, false
				} else if next != c {
					t.Fatalf("step %d: a call that took nothing changed the state", i)
				}
			}
		})
	}
}

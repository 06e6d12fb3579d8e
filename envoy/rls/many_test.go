package rls

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestDedupeTakesLinearTime: the give-backs of a request's descriptors
// (is_negative_hits), one per budget, are summed in time linear in them:
// a request of 100,000 descriptors fits in gRPC's default message size,
// and comparing every pair cost the service tens of seconds. Two of one
// budget are still summed, up to its capacity. The bound is generous.
func TestDedupeTakesLinearTime(t *testing.T) {
	const n = 100_000
	limit := ratelimit.PerMinute(10)
	ts := make([]ratelimit.Take, n)
	for i := range ts {
		ts[i] = ratelimit.Take{Key: "k" + strconv.Itoa(i%(n-2)), Limit: limit, N: 6}
	}
	start := time.Now()
	out := dedupe(ts)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("%d give-backs took %v, want well under a second", n, took)
	}
	if len(out) != n-2 || out[0].N != 10 || out[1].N != 10 || out[2].N != 6 {
		t.Errorf("%d budgets, the first three %d %d %d; want %d, 10 10 6", len(out), out[0].N, out[1].N, out[2].N, n-2)
	}
}

package memory_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// machineStall is the slowest of the AllowN calls one caller makes for d
// on a small store with no housekeeping to do: what the machine itself
// (other processes, the OS scheduler, the garbage collector) adds to a
// call, measured in the run so that a busy machine does not read as a
// stalling store.
func machineStall(d time.Duration) time.Duration {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(10)
	var worst time.Duration
	for i, stop := 0, time.Now().Add(d); time.Now().Before(stop); i++ {
		start := time.Now()
		s.AllowN(ctx, "hot-"+strconv.Itoa(i%1000), l, 1)
		worst = max(worst, time.Since(start))
	}
	return worst
}

// stallLimit is the slowest AllowN the housekeeping test accepts:
// stallBound, or three times what the machine alone added in a run of 2 s
// when that is more. 0 means no bound (the race detector).
func stallLimit(t *testing.T) time.Duration {
	if stallBound == 0 {
		return 0
	}
	m := machineStall(2 * time.Second)
	t.Logf("the slowest AllowN with no housekeeping: %v", m)
	return max(stallBound, 3*m)
}

package memory_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// machineStall is the slowest of the AllowN calls one caller makes until
// stop is closed, on a small store with no housekeeping to do: what the
// machine itself (other processes, the OS scheduler, the garbage collector)
// adds to a call, measured in the run so that a busy machine does not read
// as a stalling store.
func machineStall(stop <-chan struct{}) time.Duration {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	ctx, l := context.Background(), ratelimit.PerSecond(10)
	var worst time.Duration
	for i := 0; ; i++ {
		select {
		case <-stop:
			return worst
		default:
		}
		start := time.Now()
		s.AllowN(ctx, "hot-"+strconv.Itoa(i%1000), l, 1)
		worst = max(worst, time.Since(start))
	}
}

// control is a second caller beside the housekeeping test's own, on a
// store of its own with no housekeeping: it sees what the machine does to
// a call at the same moments (a busy machine's load comes and goes within
// seconds), so that only a wait the caller's store adds can fail the test.
type control struct {
	stop  chan struct{}
	worst chan time.Duration
}

func startControl() *control {
	c := &control{stop: make(chan struct{}), worst: make(chan time.Duration, 1)}
	go func() { c.worst <- machineStall(c.stop) }()
	return c
}

// finish stops the control caller and returns its slowest call.
func (c *control) finish() time.Duration {
	close(c.stop)
	return <-c.worst
}

// stallLimit is the slowest AllowN the housekeeping test accepts:
// stallBound, or three times the slowest call of the control caller
// (during) or of a caller alone for 2 s after it, when that is more. 0
// means no bound (the race detector).
func stallLimit(t *testing.T, during time.Duration) time.Duration {
	if stallBound == 0 {
		return 0
	}
	stop := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(stop) })
	after := machineStall(stop)
	t.Logf("the slowest AllowN with no housekeeping: %v beside the caller, %v alone after it", during, after)
	return max(stallBound, 3*max(during, after))
}

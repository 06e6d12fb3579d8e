package redisstore_test

import (
	"os"
	"time"

	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// slowTests reports whether RATELIMIT_SLOW_TESTS asks for the long runs
// (.ci/run sets it): the fault tests, which start redis-servers of their
// own, and the exact comparisons at full length.
func slowTests() bool { return os.Getenv("RATELIMIT_SLOW_TESTS") != "" }

// timelines is how many random timelines an exact comparison on miniredis
// replays: full, with RATELIMIT_SLOW_TESTS set, or 1, which checks the same
// arithmetic at a fraction of the cost (miniredis interprets Lua in the
// test process, slowly under the race detector).
func timelines(full int) storetest.Option {
	if slowTests() {
		return storetest.Timelines(full)
	}
	return storetest.Timelines(1)
}

// slack is a latency bound of a fault test with room for a busy machine
// under the race detector: three times d. A bound this loose still tells a
// request answered within its budget from one that waited out the fault,
// which lasts longer than slack(500 ms) wherever a test asserts it.
func slack(d time.Duration) time.Duration { return 3 * d }

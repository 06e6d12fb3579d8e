package memory_test

import (
	"os"

	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// slowTests reports whether RATELIMIT_SLOW_TESTS asks for the long runs
// (.ci/run sets it): the floods and exact comparisons at full length. The
// default run makes the same checks on shorter loops.
func slowTests() bool { return os.Getenv("RATELIMIT_SLOW_TESTS") != "" }

// sized returns full with RATELIMIT_SLOW_TESTS set, and short otherwise.
func sized(full, short int) int {
	if slowTests() {
		return full
	}
	return short
}

// timelines is how many random timelines an exact comparison of the
// conformance suite replays: the suite's 10 with RATELIMIT_SLOW_TESTS set,
// 2 otherwise, which replays the same arithmetic on fewer random draws.
func timelines() storetest.Option { return storetest.Timelines(sized(10, 2)) }

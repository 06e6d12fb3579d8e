package ratelimit_test

import "os"

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

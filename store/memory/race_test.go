//go:build race

package memory_test

import "time"

// stallBound is the slowest AllowN the housekeeping test accepts; 0 means
// the latency is logged, not checked. Under -race every memory access is
// several times slower and the suite shares two cores with other test
// binaries and Redis, so a wait measures the scheduler more than the store:
// .ci/run checks the 10 ms bound in a run of its own, without -race.
const stallBound time.Duration = 0

// housekeepingKeys is how many keys the housekeeping test fills the store
// with: under -race, where its latency is not checked, a fortieth of the
// million of the checked run (a tenth with RATELIMIT_SLOW_TESTS), which
// still exercises every code path.
var housekeepingKeys = sized(100_000, 25_000)

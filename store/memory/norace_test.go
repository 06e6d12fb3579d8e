//go:build !race

package memory_test

import "time"

// stallBound is the slowest AllowN the housekeeping test accepts.
const stallBound = 10 * time.Millisecond

// housekeepingKeys is how many keys the housekeeping test fills the store
// with.
const housekeepingKeys = 1_000_000

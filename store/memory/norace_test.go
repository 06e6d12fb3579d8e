//go:build !race

package memory_test

import "time"

// stallBound is the slowest AllowN the housekeeping test accepts.
const stallBound = 10 * time.Millisecond

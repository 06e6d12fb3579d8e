//go:build race

package memory_test

import "time"

// stallBound is the slowest AllowN the housekeeping test accepts. The race
// detector slows every memory access several times over, so under -race the
// test checks a looser bound; .ci/run also runs it without -race at 10 ms.
const stallBound = 50 * time.Millisecond

package ratelimit

import (
	"fmt"
	"testing"
)

// TestCachesShareNoEntries: the tables of recent store keys and RateLimit
// values are the process's, shared by every policy of every limiter; many
// caches asked for the same key, and many policies' values of the same
// numbers, each answer their own, however their entries meet in the
// tables' slots.
func TestCachesShareNoEntries(t *testing.T) {
	const n = 400
	caches := make([]*keyCache, n)
	values := make([]headerValues, n)
	for i := range n {
		caches[i] = newKeyCache()
		values[i] = newHeaderValues(fmt.Sprint("p", i), PerMinute(10))
	}
	for round := range 3 {
		for i := range n {
			ns := fmt.Sprint("ns", i, "/")
			got, err := caches[i].storeKey("client", func(raw string) (string, error) { return ns + raw, nil })
			if err != nil || got != ns+"client" {
				t.Fatalf("round %d, cache %d: %q %v, want %q", round, i, got, err, ns+"client")
			}
			if got, want := values[i].rateLimit(5, 1)[0], fmt.Sprintf(`"p%d";r=5;t=1`, i); got != want {
				t.Fatalf("round %d, policy %d: RateLimit %q, want %q", round, i, got, want)
			}
		}
	}
	held := 0
	for i, c := range caches {
		if c.len() > 1 {
			t.Fatalf("cache %d holds %d entries of its one key", i, c.len())
		}
		held += c.len()
	}
	if held < n/2 { // caches whose keys meet in a slot take it in turn
		t.Fatalf("%d of %d caches hold their returning key", held, n)
	}
}

package memory

import (
	"math/rand/v2"
	"os"
	"testing"
)

// TestTableMatchesMap runs random inserts, updates and deletes on a table
// and on a Go map, with hashes crowded into few home slots so that probe
// runs wrap around and deletions shift, and compares them after each step:
// 5,000 steps, four times as many as the 1,200 hashes drawn from,
// or 20,000 with RATELIMIT_SLOW_TESTS.
func TestTableMatchesMap(t *testing.T) {
	steps := 5_000
	if os.Getenv("RATELIMIT_SLOW_TESTS") != "" {
		steps = 20_000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var tb table
	ref := map[uint64]cell{}
	for step := range steps {
		h := uint64(rng.IntN(300))<<8 | uint64(rng.IntN(4)) | 1
		switch i, found := tb.find(h); {
		case rng.IntN(3) == 0:
			if found {
				tb.deleteAt(i)
				delete(ref, h)
			}
		case found:
			tb.slots[i].c.at++
			c := ref[h]
			c.at++
			ref[h] = c
		default:
			c := cell{exp: int64(step)}
			tb.insert(i, h, c, keep{})
			ref[h] = c
		}
		if step%50 == 0 {
			tb.deleteIf(func(s *slot) bool { return s.c.exp%7 == 0 })
			for h, c := range ref {
				if c.exp%7 == 0 {
					delete(ref, h)
				}
			}
			tb.shrink()
		}
		if tb.used != len(ref) {
			t.Fatalf("step %d: table holds %d, map %d", step, tb.used, len(ref))
		}
		for h, want := range ref {
			i, found := tb.find(h)
			if !found || tb.slots[i].c != want {
				t.Fatalf("step %d: key %x lost or wrong", step, h)
			}
		}
	}
}

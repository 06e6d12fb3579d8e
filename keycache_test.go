package ratelimit

import (
	"fmt"
	"sync"
	"testing"
)

// TestKeyCacheAnswersEveryKeyWithItsOwn: many goroutines, far more keys
// than slots, each answer the one the key's own function gives.
func TestKeyCacheAnswersEveryKeyWithItsOwn(t *testing.T) {
	c := newKeyCache()
	parts := func(raw string) (string, string, error) { return raw, "ns/" + raw, nil }
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20_000 {
				raw := fmt.Sprint("k", (i*7+g)%10_000)
				if client, got, _ := c.storeKey(raw, parts); got != "ns/"+raw || client != raw {
					t.Errorf("storeKey(%q) = %q", raw, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestRateLimitValuesAreExactUnderCollisions(t *testing.T) {
	v := newHeaderValues("api", PerMinute(60))
	for r := int64(0); r < 3000; r += 7 {
		for tt := int64(0); tt < 90; tt += 13 {
			want := fmt.Sprintf(`"api";r=%d;t=%d`, r, tt)
			if got := v.rateLimit(r, tt); len(got) != 1 || got[0] != want {
				t.Fatalf("rateLimit(%d, %d) = %q, want %q", r, tt, got, want)
			}
		}
	}
}

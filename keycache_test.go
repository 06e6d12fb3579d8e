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
	parts := func(raw string) (string, error) { return "ns/" + raw, nil }
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20_000 {
				raw := fmt.Sprint("k", (i*7+g)%10_000)
				if got, _ := c.storeKey(raw, parts); got != "ns/"+raw {
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

// TestKeyCacheKeepsReturningKeys: a key is cached when it comes back, and
// a flood of keys seen once neither is cached nor evicts it.
func TestKeyCacheKeepsReturningKeys(t *testing.T) {
	c := newKeyCache()
	made := 0
	parts := func(raw string) (string, error) { made++; return "ns/" + raw, nil }
	for i, want := range []int{1, 2, 2, 2} {
		if got, _ := c.storeKey("returning", parts); got != "ns/returning" || made != want {
			t.Fatalf("call %d: %q, made %d store keys; want ns/returning and %d", i+1, got, made, want)
		}
	}
	made = 0
	for i := range 100_000 {
		c.storeKey(fmt.Sprint("flood-", i), parts)
	}
	if cached := c.len(); made != 100_000 || cached != 1 {
		t.Fatalf("made %d store keys and cached %d for 100,000 keys seen once; want 100,000 and only the returning key", made, c.len())
	}
	if got, _ := c.storeKey("returning", parts); got != "ns/returning" || made != 100_000 {
		t.Fatal("the flood evicted the returning key")
	}
}

package ratelimit_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestALimiterCostsLittleHeap: a limiter, with a policy and blocks, holds
// a few KB of heap, not a table of its own per policy (a rules file of
// thousands of rules is thousands of limiters): 1,000 of them hold less
// than 16 MB, where each key cache of its own held about 100 KB.
func TestALimiterCostsLittleHeap(t *testing.T) {
	store := memory.New()
	defer store.Close()
	const n = 1000
	limiters := make([]*ratelimit.Limiter, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range limiters {
		l, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithName("r"+string(rune('a'+i%26))),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "hour", Limit: ratelimit.PerHour(100)}),
			ratelimit.WithBlock(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		limiters[i] = l
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(limiters)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 16<<10 {
		t.Fatalf("a limiter holds %d bytes of heap, want at most 16 KB", per)
	} else {
		t.Logf("a limiter holds %d bytes of heap", per)
	}
}

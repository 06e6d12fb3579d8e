package ratelimit

import (
	"testing"
	"time"
)

func TestThrottledLogWritesOncePerSecondWithTheCount(t *testing.T) {
	var tl throttledLog
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := tl.allow(now); !ok {
		t.Fatal("the first event was not logged")
	}
	for range 99 {
		now = now.Add(time.Millisecond)
		if ok, _ := tl.allow(now); ok {
			t.Fatal("an event within the second was logged")
		}
	}
	now = now.Add(time.Second)
	if ok, n := tl.allow(now); !ok || n != 99 {
		t.Fatalf("after a second: logged %v with %d suppressed, want true and 99", ok, n)
	}
}

package ratelimit

import (
	"errors"
	"testing"
	"time"
)

func TestBreakerProbesOneAtATime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := NewBreaker(1, time.Second)
	b.failure(t0, false, errors.New("store down"))
	t1 := t0.Add(time.Second)
	ok, probe := b.allow(t1)
	if !ok || !probe {
		t.Fatalf("after the cool-down allow = %v, %v; want a probe", ok, probe)
	}
	if ok, _ := b.allow(t1); ok {
		t.Fatal("a second call went to the store while the probe was in flight")
	}
	b.release(probe) // the probe's client went away
	if ok, probe := b.allow(t1); !ok || !probe {
		t.Fatal("after a released probe, the next call does not probe")
	}
}

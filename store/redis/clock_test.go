package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// learnClock calls s until it knows Redis's clock, in which it sends a
// call's deadline: only a reply that came back quickly teaches it, and on
// a busy machine under the race detector the first few may not.
func learnClock(t *testing.T, s *redisstore.Store) {
	t.Helper()
	for i := 0; !redisstore.ClockKnown(s); i++ {
		if i == 1000 {
			t.Fatal("1,000 calls and none answered quickly enough to show the store Redis's clock")
		}
		if _, err := s.AllowN(context.Background(), "clock", ratelimit.PerHour(1), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRedisClockSteppedForwardIsFollowedAtOnce: when Redis's clock steps
// forward past the time budget (an NTP step, a VM resumed), the offset the
// store learnt sends every deadline in the past. The first quick reply
// that refuses a take as late teaches the store the new offset: the calls
// after it are decided. The store used to keep its offset until its 10 s
// renewal, refusing every call as late meanwhile.
func TestRedisClockSteppedForwardIsFollowedAtOnce(t *testing.T) {
	const budget = 5 * time.Second // kept by a busy machine under the race detector
	mr, c := newMini(t)
	mr.SetTime(time.Now())
	s := redisstore.New(c)
	learnClock(t, s)
	mr.SetTime(time.Now().Add(4 * budget)) // Redis's clock steps forward
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		_, err := s.AllowN(ctx, "k", ratelimit.PerHour(1000), 1)
		return err
	}
	late := 0
	for ; call() != nil; late++ {
		if late == 100 { // a reply teaches only if quick: on a busy machine a few may not be
			t.Fatal("100 calls after Redis's clock stepped forward, all refused as late")
		}
	}
	for i := range 20 {
		if err := call(); err != nil {
			t.Fatalf("call %d after the store followed the step (%d refused before): %v", i+1, late, err)
		}
	}
}

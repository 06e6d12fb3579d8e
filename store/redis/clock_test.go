package redisstore_test

import (
	"context"
	"testing"

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

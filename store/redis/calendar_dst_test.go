package redisstore_test

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestCalendarSkippedMidnightByRedisTime: with Redis's clock walking by the
// minute across Santiago's skipped midnight (2011-08-20 23:59:59 -04, then
// 2011-08-21 01:00 -03), far from the app's, every decision is answered
// and a quota of 3 admits exactly the first 3 of each day: the hour before
// the jump is in the day before, the day after starts at the jump.
func TestCalendarSkippedMidnightByRedisTime(t *testing.T) {
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	jump := time.Date(2011, 8, 21, 4, 0, 0, 0, time.UTC)
	l := ratelimit.PerDay(3, santiago)
	mr, client := newMini(t)
	store := redisstore.New(client)
	admitted := map[string]int{}
	for now := jump.Add(-3 * time.Hour); now.Before(jump.Add(2 * time.Hour)); now = now.Add(time.Minute) {
		mr.SetTime(now)
		res, err := store.AllowN(context.Background(), "user/1", l, 1)
		if err != nil {
			t.Fatalf("at %v (local %v): %v", now, now.In(santiago), err)
		}
		day := "before"
		if !now.Before(jump) {
			day = "after"
		}
		if want := admitted[day] < 3; res.Allowed != want {
			t.Fatalf("at %v (local %v): %+v after %d admitted that day", now, now.In(santiago), res, admitted[day])
		}
		if res.Allowed {
			admitted[day]++
		}
	}
	if admitted["before"] != 3 || admitted["after"] != 3 {
		t.Fatalf("admitted %v, want 3 each day", admitted)
	}
}

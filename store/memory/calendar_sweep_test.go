package memory

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/ratelimit-go/ratelimit"
)

// TestCalendarCountOutlivesSweeps walks the clock by the minute across
// days whose midnight a zone skips or shows twice, sweeping the key's
// shard before every request, and checks that a quota of 3 admits
// exactly 3 in each window of Limit.Window, and that they are the first
// 3 requests of it: a window's count is never dropped before its end.
func TestCalendarCountOutlivesSweeps(t *testing.T) {
	for _, c := range []struct {
		name string
		zone string
		day  time.Time // a moment of the day of the change, in UTC
	}{
		{"a skipped midnight in Santiago", "America/Santiago", time.Date(2011, 8, 21, 12, 0, 0, 0, time.UTC)},
		{"a repeated midnight in Havana", "America/Havana", time.Date(2011, 11, 13, 12, 0, 0, 0, time.UTC)},
		{"a skipped day in Apia", "Pacific/Apia", time.Date(2011, 12, 30, 12, 0, 0, 0, time.UTC)},
		{"a skipped midnight on the first of a month in Havana", "America/Havana", time.Date(2012, 4, 1, 12, 0, 0, 0, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			zone, err := time.LoadLocation(c.zone)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []ratelimit.Limit{ratelimit.PerDay(3, zone), ratelimit.PerMonth(3, zone)} {
				now := c.day.Add(-36 * time.Hour)
				s := New(WithClock(func() time.Time { return now }), WithSweepInterval(0))
				defer s.Close()
				sh := &s.shards[s.hash("k", l.Algorithm)>>s.shift]
				admitted := map[time.Time]int{} // by window start
				for ; now.Before(c.day.Add(36 * time.Hour)); now = now.Add(time.Minute) {
					sh.sweep(s.now())
					res, err := s.AllowN(context.Background(), "k", l, 1)
					if err != nil {
						t.Fatal(err)
					}
					start, end := l.Window(now)
					if want := admitted[start] < 3; res.Allowed != want {
						t.Fatalf("%v at %v (local %v): allowed %v after %d in the window [%v, %v)", l, now, now.In(zone), res.Allowed, admitted[start], start.In(zone), end.In(zone))
					}
					if res.Allowed {
						admitted[start]++
					} else if res.RetryAfter != end.Sub(now) {
						t.Fatalf("%v at %v: RetryAfter %v, want %v", l, now, res.RetryAfter, end.Sub(now))
					}
				}
			}
		})
	}
}

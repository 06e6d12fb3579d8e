package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestCalendarWindowByRedisTime: the store sends the windows around the
// app's clock and Redis TIME picks one. With Redis a second past the app's
// midnight the next day counts; with Redis days ahead the take is sent
// again around Redis's clock, and counts in Redis's day.
func TestCalendarWindowByRedisTime(t *testing.T) {
	l := ratelimit.PerDay(2, nil)
	_, midnight := l.Window(time.Now())
	for _, c := range []struct {
		name  string
		redis time.Time
		want  time.Duration // until Redis's next midnight
	}{
		{"a second past the app's midnight", midnight.Add(time.Second), 24*time.Hour - time.Second},
		{"ten days ahead", midnight.Add(10*24*time.Hour + time.Second), 24*time.Hour - time.Second},
		{"a second before the app's day", midnight.Add(-24*time.Hour - time.Second), time.Second},
		{"two days behind", midnight.Add(-3*24*time.Hour + time.Hour), 23 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			mr, client := newMini(t)
			mr.SetTime(c.redis)
			store := redisstore.New(client)
			res, err := store.AllowN(context.Background(), "user/1", l, 2)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if !res.Allowed || res.ResetAfter != want {
				t.Fatalf("AllowN = %+v, want allowed with ResetAfter %v", res, want)
			}
			if res, _ := store.AllowN(context.Background(), "user/1", l, 1); res.Allowed || res.RetryAfter != want {
				t.Fatalf("AllowN past the quota = %+v, want denied until %v", res, want)
			}
		})
	}
}

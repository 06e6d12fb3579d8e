package redisstore_test

import (
	"context"
	"errors"
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

// TestCalendarAllowAllByRedisTime: an AllowAll with a calendar limit, with
// Redis days ahead of the app, is sent again around Redis's clock and
// counts in Redis's day; in a batch, an AllowAll whose windows miss
// Redis's clock takes nothing, and the decisions around it are decided
// as usual.
func TestCalendarAllowAllByRedisTime(t *testing.T) {
	bg := context.Background()
	day := ratelimit.PerDay(2, nil)
	plain := ratelimit.PerHour(5)
	_, midnight := day.Window(time.Now())
	takes := func(client string) []ratelimit.Take {
		return []ratelimit.Take{{Key: "day/" + client, Limit: day, N: 2}, {Key: "api/" + client, Limit: plain, N: 1}}
	}
	mr, client := newMini(t)
	mr.SetTime(midnight.Add(10*24*time.Hour + time.Second))
	want := 24*time.Hour - time.Second // until Redis's next midnight

	batched := redisstore.New(client, redisstore.WithPrefix("batched:"))
	res, errs := redisstore.DecideBatch(batched, []redisstore.BatchTake{
		{Ctx: bg, Key: "api/1", Limit: plain, N: 1},
		{Ctx: bg, All: takes("1"), Results: make([]ratelimit.Result, 2)},
		{Ctx: bg, Key: "api/1", Limit: plain, N: 1},
	})
	if !errors.Is(errs[1], redisstore.ErrMissedWindow) {
		t.Fatalf("AllowAll with windows around the app's clock: %v, want its windows missed", errs[1])
	}
	if errs[0] != nil || errs[2] != nil || res[0].Remaining != 4 || res[2].Remaining != 3 {
		t.Fatalf("takes around it: %+v, %v, %+v, %v; want remaining 4 then 3: the AllowAll took nothing", res[0], errs[0], res[2], errs[2])
	}

	store := redisstore.New(client)
	results := make([]ratelimit.Result, 2)
	if err := store.AllowAll(bg, takes("2"), results); err != nil {
		t.Fatal(err)
	}
	if !results[0].Allowed || results[0].ResetAfter != want || !results[1].Allowed {
		t.Fatalf("AllowAll = %+v, want both allowed, the day's ResetAfter %v", results, want)
	}
	if err := store.AllowAll(bg, takes("2"), results); err != nil || results[0].Allowed || results[0].RetryAfter != want {
		t.Fatalf("AllowAll past the quota = %+v, %v; want denied until %v", results, err, want)
	}
}

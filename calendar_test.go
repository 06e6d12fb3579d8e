package ratelimit_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestCalendarWindow(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	for _, c := range []struct {
		name       string
		l          ratelimit.Limit
		at         time.Time
		start, end time.Time
	}{
		{"a day in UTC", ratelimit.PerDay(5, nil), time.Date(2026, 5, 4, 13, 0, 0, 0, time.UTC),
			time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)},
		{"the day daylight saving starts: 23 hours", ratelimit.PerDay(5, berlin), time.Date(2026, 3, 29, 12, 0, 0, 0, berlin),
			time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC)},
		{"the day daylight saving ends: 25 hours", ratelimit.PerDay(5, berlin), time.Date(2026, 10, 25, 12, 0, 0, 0, berlin),
			time.Date(2026, 10, 24, 22, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 23, 0, 0, 0, time.UTC)},
		{"just before midnight in Berlin", ratelimit.PerDay(5, berlin), time.Date(2026, 6, 1, 21, 59, 59, 0, time.UTC),
			time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 22, 0, 0, 0, time.UTC)},
		{"a month in Berlin", ratelimit.PerMonth(5, berlin), time.Date(2026, 2, 14, 0, 0, 0, 0, berlin),
			time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)},
		{"December into January", ratelimit.PerMonth(5, nil), time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC),
			time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"a plain fixed window", ratelimit.PerMinute(5).WithAlgorithm(ratelimit.FixedWindow), time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC),
			time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, end := c.l.Window(c.at)
			if !start.Equal(c.start) || !end.Equal(c.end) {
				t.Fatalf("Window(%v) = %v, %v; want %v, %v", c.at, start.UTC(), end.UTC(), c.start, c.end)
			}
		})
	}
}

func TestCalendarValidate(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	for _, c := range []struct {
		name string
		l    ratelimit.Limit
		want string // "" for valid
	}{
		{"per day", ratelimit.PerDay(1000, berlin), ""},
		{"per month in UTC", ratelimit.PerMonth(20000, nil), ""},
		{"a token bucket", ratelimit.PerDay(10, nil).WithAlgorithm(ratelimit.TokenBucket), "needs the fixed window"},
		{"a period of its own", ratelimit.Limit{Rate: 5, Period: time.Hour, Algorithm: ratelimit.FixedWindow, Calendar: ratelimit.CalendarDay}, "has the period"},
		{"an unknown calendar", ratelimit.Limit{Rate: 5, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow, Calendar: 7}, "unknown calendar"},
		{"a zone alone", ratelimit.Limit{Rate: 5, Period: time.Hour, Zone: berlin}, "zone without a calendar"},
		{"no rate", ratelimit.PerDay(0, nil), "rate 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.l.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ratelimit.ErrInvalidLimit) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want ErrInvalidLimit with %q", err, c.want)
			}
		})
	}
	if got := ratelimit.PerDay(1000, berlin).String(); got != "1000 per day (Europe/Berlin)" {
		t.Fatalf("String = %q", got)
	}
}

func TestCalendarNeedsAStoreThatDecidesIt(t *testing.T) {
	_, err := ratelimit.New(failingStore{}, ratelimit.PerSecond(10),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Limit: ratelimit.PerDay(100, nil)}))
	if err == nil || !strings.Contains(err.Error(), "does not decide calendar windows") {
		t.Fatalf("New = %v, want an error about calendar windows", err)
	}
	store := memory.New()
	defer store.Close()
	if _, err := ratelimit.New(calendarRemote{store}, ratelimit.PerDay(100, nil), ratelimit.WithFallback(store, 3)); err != nil {
		t.Fatalf("New on stores that decide calendars: %v", err)
	}
	_, err = ratelimit.New(calendarRemote{store}, ratelimit.PerDay(100, nil), ratelimit.WithFallback(&keyRecorder{Store: memory.New()}, 3))
	if err == nil || !strings.Contains(err.Error(), "the fallback store does not decide") {
		t.Fatalf("New = %v, want an error about the fallback", err)
	}
}

// calendarRemote is a store that decides calendars and is not Local.
type calendarRemote struct{ *memory.Store }

func (calendarRemote) Local() bool { return false }

// TestCalendarHeaders: a daily quota's Reset and Retry-After point at the
// next midnight of its zone, on the store's clock.
func TestCalendarHeaders(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	now := time.Date(2026, 10, 25, 20, 30, 0, 0, berlin) // a 25-hour day
	store := memory.New(memory.WithClock(func() time.Time { return now }))
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Limit: ratelimit.PerDay(2, berlin)}),
		ratelimit.WithHeaders(ratelimit.HeadersBoth))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(hello)
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	untilMidnight := "12600" // 3.5 hours
	if w.Code != 429 || w.Header().Get("Retry-After") != untilMidnight || w.Header().Get("X-RateLimit-Reset") != untilMidnight {
		t.Fatalf("code %d, Retry-After %q, Reset %q; want 429 and %s", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"), untilMidnight)
	}
	if got := w.Header().Get("RateLimit"); got != `"daily";r=0;t=`+untilMidnight {
		t.Fatalf("RateLimit = %q", got)
	}
}

package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"
	_ "time/tzdata" // the zones of the calendar cases, wherever the suite runs

	"github.com/ratelimit-go/ratelimit"
)

// The cases of calendar quotas ([ratelimit.PerDay], [ratelimit.PerMonth]),
// run for stores that implement [ratelimit.Calendars]: checked against a
// brute-force model that knows nothing of time.Date, only the local date
// of each instant.

// isCalendars reports whether probe, a store of the suite's factory,
// decides calendar limits.
func isCalendars(probe ratelimit.Store) bool {
	c, ok := probe.(ratelimit.Calendars)
	return ok && c.Calendars()
}

func calendarCases() []testCase {
	return []testCase{
		{name: "calendar/a daily quota denies past its count until the next midnight", run: dailyQuotaNow},
		{name: "calendar/a day of a daylight-saving change is 23 or 25 hours long", clock: true, run: dstDays},
		{name: "calendar/a quota and a rate limit together: all or nothing", clock: true, run: quotaWithRate},
		{name: "calendar/a skipped midnight: each day admits its quota, the day starts where the clock lands", clock: true, run: skippedMidnight},
		{name: "calendar/a repeated midnight: the day starts at the first and admits its quota through the second", clock: true, run: repeatedMidnight},
	}
}

// berlin is the zone of the calendar cases: daylight saving starts on the
// last Sunday of March and ends on the last of October.
func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatalf("LoadLocation: %v", err)
	}
	return loc
}

// calendarModel counts admitted tokens per local date (or month) label,
// and finds where a window ends by walking the clock forward until the
// label changes.
type calendarModel struct {
	l     ratelimit.Limit
	count map[string]int
	ends  map[string]time.Time // each label's end, walked once
}

func (m *calendarModel) label(t time.Time) string {
	zone := m.l.Zone
	if zone == nil {
		zone = time.UTC
	}
	if m.l.Calendar == ratelimit.CalendarMonth {
		return t.In(zone).Format("2006-01")
	}
	return t.In(zone).Format("2006-01-02")
}

// end is the first instant after t with another label: by the minute, then
// by the second (zones change offset on whole seconds).
func (m *calendarModel) end(t time.Time) time.Time {
	here := m.label(t)
	if e, ok := m.ends[here]; ok {
		return e
	}
	u := t.Truncate(time.Minute)
	for m.label(u.Add(time.Minute)) == here {
		u = u.Add(time.Minute)
	}
	for m.label(u) == here {
		u = u.Add(time.Second)
	}
	if m.ends == nil {
		m.ends = map[string]time.Time{}
	}
	m.ends[here] = u
	return u
}

// decide is the model's decision on n tokens at t: allowed, remaining,
// retry-after and reset-after.
func (m *calendarModel) decide(t time.Time, n int) ratelimit.Result {
	lb := m.label(t)
	c := m.count[lb]
	res := ratelimit.Result{Limit: m.l}
	if c+n <= m.l.Rate {
		res.Allowed = true
		c += n
		m.count[lb] = c
	} else {
		res.RetryAfter = m.end(t).Sub(t)
	}
	res.Remaining = m.l.Rate - c
	if c > 0 {
		res.ResetAfter = m.end(t).Sub(t)
	}
	return res
}

// calendarOracle replays random timelines of a calendar quota in Berlin,
// through both changes of daylight saving and the ends of months, on store
// and on calendarModel, and fails on the first decision that differs.
func calendarOracle(t *testing.T, store ratelimit.Store, set func(time.Time), start time.Time, c ratelimit.Calendar, timelines, steps int) int {
	t.Helper()
	rng, zone := newRand(t), berlin(t)
	year := start.Year() + 1 // the suite's clock only goes forward
	now := time.Date(year, time.March, 20, 12, 0, 0, 0, zone)
	step := 4 * time.Hour
	if c == ratelimit.CalendarMonth {
		now, step = time.Date(year, time.January, 20, 12, 0, 0, 0, zone), 5*24*time.Hour
	}
	compared := 0
	for i := range timelines {
		l := ratelimit.PerDay(1+rng.IntN(20), zone)
		if c == ratelimit.CalendarMonth {
			l = ratelimit.PerMonth(1+rng.IntN(20), zone)
		}
		m := &calendarModel{l: l, count: map[string]int{}}
		key := "calendar-" + strconv.Itoa(i)
		for s := range steps {
			now = now.Add(logUniform(rng, time.Second, step).Truncate(time.Second))
			if rng.IntN(8) == 0 { // just before or at a boundary
				now = m.end(now).Add(-time.Duration(rng.IntN(2)) * time.Second)
			}
			set(now)
			n := rng.IntN(l.Rate/2 + 2)
			got, err := store.AllowN(context.Background(), key, l, n)
			if err != nil {
				t.Fatalf("timeline %d step %d: AllowN(%v, %d): %v", i, s, l, n, err)
			}
			want := m.decide(now, n)
			if got != want {
				t.Fatalf("timeline %d step %d (limit %v, n %d, at %v): got %+v, model %+v", i, s, l, n, now, got, want)
			}
			compared++
		}
	}
	return compared
}

// dailyQuotaNow: a daily quota in UTC on the store's own clock denies past
// its count, until the next midnight.
func dailyQuotaNow(e *env) {
	l := ratelimit.PerDay(3, nil)
	before := time.Now()
	e.expect("daily", l, 2, true, 1)
	e.expect("daily", l, 1, true, 0)
	res := e.expect("daily", l, 1, false, 0)
	after := time.Now()
	_, endBefore := l.Window(before)
	_, endAfter := l.Window(after)
	if e.exact {
		return // the suite's clock is not the wall's; dstDays checks the waits
	}
	// The store's clock read the time between before and after.
	if res.RetryAfter > endBefore.Sub(before)+time.Second || res.RetryAfter < endAfter.Sub(after)-time.Second && endBefore == endAfter {
		e.t.Fatalf("RetryAfter %v, want about %v: until the next midnight UTC", res.RetryAfter, endAfter.Sub(after))
	}
	if res.ResetAfter != res.RetryAfter {
		e.t.Fatalf("ResetAfter %v, want RetryAfter %v: the quota is whole at midnight", res.ResetAfter, res.RetryAfter)
	}
}

// dstDays: in Berlin, the last Sunday of March has 23 hours and that of
// October 25; a quota spent at the day's first instant waits until the
// next midnight.
func dstDays(e *env) {
	zone := berlin(e.t)
	l := ratelimit.PerDay(2, zone)
	year := e.clock().Year() + 1 // the suite's clock only goes forward
	for _, day := range []struct {
		start time.Time
		hours time.Duration
	}{
		{lastSunday(year, time.March, zone), 23},
		{lastSunday(year, time.October, zone), 25},
		{time.Date(year, time.December, 3, 0, 0, 0, 0, zone), 24},
	} {
		key := "dst-" + day.start.Format("01-02")
		e.setTo(day.start)
		e.expect(key, l, 2, true, 0)
		res := e.expect(key, l, 1, false, 0)
		if want := day.hours * time.Hour; res.RetryAfter != want || res.ResetAfter != want {
			e.t.Fatalf("%s: RetryAfter %v, ResetAfter %v; want %v", key, res.RetryAfter, res.ResetAfter, want)
		}
		e.setTo(day.start.Add(day.hours*time.Hour - time.Second))
		e.expect(key, l, 1, false, 0)
		e.setTo(day.start.Add(day.hours * time.Hour))
		e.expect(key, l, 2, true, 0)
	}
}

// setTo moves the controlled clock forward to t.
func (e *env) setTo(t time.Time) { e.wait(t.Sub(e.clock())) }

// lastSunday is the midnight that starts the last Sunday of month in zone.
func lastSunday(year int, month time.Month, zone *time.Location) time.Time {
	d := time.Date(year, month+1, 0, 0, 0, 0, 0, zone) // the month's last day
	return d.AddDate(0, 0, -int(d.Weekday()))
}

// quotaWithRate: a daily quota taken with a token bucket by
// ratelimit.AllowAll (one call on a MultiStore, keys of one client) takes
// from neither when either denies, and the quota's denial waits until
// midnight.
func quotaWithRate(e *env) {
	zone := berlin(e.t)
	day := time.Date(e.clock().Year()+1, time.June, 1, 0, 0, 0, 0, zone)
	e.setTo(day.Add(23 * time.Hour)) // an hour before midnight
	quota, rate := ratelimit.PerDay(3, zone), ratelimit.PerSecond(2)
	takes := func(n int) []ratelimit.Take {
		return []ratelimit.Take{{Key: "day/qr", Limit: quota, N: n}, {Key: "second/qr", Limit: rate, N: n}}
	}
	all := func(n int, allowed0, allowed1 bool, remaining0, remaining1 int) ratelimit.Result {
		e.t.Helper()
		results := make([]ratelimit.Result, 2)
		if err := ratelimit.AllowAll(context.Background(), e.store, takes(n), results); err != nil {
			e.t.Fatalf("AllowAll: %v", err)
		}
		if results[0].Allowed != allowed0 || results[1].Allowed != allowed1 || results[0].Remaining != remaining0 || results[1].Remaining != remaining1 {
			e.t.Fatalf("AllowAll(n %d) = %+v; want allowed %v %v, remaining %d %d", n, results, allowed0, allowed1, remaining0, remaining1)
		}
		return results[0]
	}
	all(2, true, true, 1, 0)
	// The bucket is empty: the quota keeps its last token.
	all(1, true, false, 1, 0)
	e.wait(time.Second)
	all(1, true, true, 0, 1)
	// The quota is spent: the bucket keeps its token; wait until midnight.
	if res, want := all(1, false, true, 0, 1), time.Hour-time.Second; res.RetryAfter != want {
		e.t.Fatalf("the quota's RetryAfter is %v, want %v: until midnight", res.RetryAfter, want)
	}
	e.setTo(day.Add(24 * time.Hour))
	all(1, true, true, 2, 1)
}

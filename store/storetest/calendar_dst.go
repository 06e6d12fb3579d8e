package storetest

import (
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The calendar cases of zones whose change of offset skips midnight or
// shows it twice: America/Santiago moves from 23:59:59 to 01:00 on the
// first Sunday of September, America/Havana from 00:59:59 back to 00:00 on
// the first Sunday of November. The day of such a change starts at the
// first instant of its date: where the clock lands, or the first midnight.

// zone loads the zone name or fails the test.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation: %v", err)
	}
	return loc
}

// midnightChange is the first change of offset of loc after from at which
// the local date turns without showing 00:00 (skipped), or at which the
// clock goes back to 00:00 of the date it shows (repeated), walking the
// zone's periods for at most ten years.
func midnightChange(t *testing.T, loc *time.Location, from time.Time, skipped bool) time.Time {
	t.Helper()
	for u := from; u.Before(from.AddDate(10, 0, 0)); {
		_, end := u.In(loc).ZoneBounds()
		if end.IsZero() {
			break
		}
		before, at := end.Add(-time.Second).In(loc), end.In(loc)
		turned := before.YearDay() != at.YearDay()
		h, m, s := at.Clock()
		midnight := h == 0 && m == 0 && s == 0
		if skipped && turned && !midnight || !skipped && !turned && midnight {
			return end
		}
		u = end
	}
	t.Fatalf("no %s midnight in %v after %v", map[bool]string{true: "skipped", false: "repeated"}[skipped], loc, from)
	return time.Time{}
}

// dstScript takes 1 token a few times at each of the instants, on the
// store and on calendarModel, fails on the first result that differs,
// and returns how many each window admitted, by its local date.
func dstScript(e *env, key string, l ratelimit.Limit, instants []time.Time) map[string]int {
	e.t.Helper()
	m := &calendarModel{l: l, count: map[string]int{}}
	admitted := map[string]int{}
	for _, at := range instants {
		e.setTo(at)
		for range 2 {
			got := e.allow(key, l, 1)
			want := m.decide(at, 1)
			if got != want {
				e.t.Fatalf("%v at %v (local %v): got %+v, model %+v", l, at.UTC(), at.In(l.Zone), got, want)
			}
			if got.Allowed {
				admitted[m.label(at)]++
			}
		}
	}
	return admitted
}

// expectAdmitted fails unless each date in want admitted as many.
func expectAdmitted(e *env, admitted map[string]int, want map[string]int) {
	e.t.Helper()
	for day, n := range want {
		if admitted[day] != n {
			e.t.Fatalf("%s admitted %d, want %d (all: %v)", day, admitted[day], n, admitted)
		}
	}
}

// skippedMidnight: in Santiago, a quota of 3 admits exactly 3 on the day
// before a skipped midnight, its last hour included, and exactly 3 on the
// 23-hour day that starts where the clock lands, whose denials wait until
// the next midnight.
func skippedMidnight(e *env) {
	loc := zone(e.t, "America/Santiago")
	l := ratelimit.PerDay(3, loc)
	jump := midnightChange(e.t, loc, e.clock().AddDate(0, 0, 1), true)
	day, before := jump.In(loc).Format("2006-01-02"), jump.Add(-time.Second).In(loc).Format("2006-01-02")
	next := (&calendarModel{l: l}).end(jump)
	if got := next.Sub(jump); got != 23*time.Hour {
		e.t.Fatalf("the day that starts at %v lasts %v, want 23h", jump.In(loc), got)
	}
	admitted := dstScript(e, "skipped", l, []time.Time{
		jump.Add(-3 * time.Hour), jump.Add(-90 * time.Minute),
		jump.Add(-time.Hour), jump.Add(-30 * time.Minute), jump.Add(-time.Second), // the hour before the jump
		jump, jump.Add(time.Second), jump.Add(time.Hour), jump.Add(12 * time.Hour), next.Add(-time.Second),
		next, next.Add(time.Hour),
	})
	expectAdmitted(e, admitted, map[string]int{before: 3, day: 3})
	e.setTo(next.Add(2 * time.Hour))
	e.expect("skipped-wait", l, 3, true, 0)
	if res := e.expect("skipped-wait", l, 1, false, 0); res.RetryAfter != 22*time.Hour {
		e.t.Fatalf("a denial 2h into the day after: RetryAfter %v, want 22h", res.RetryAfter)
	}
}

// repeatedMidnight: in Havana, the day of a repeated midnight starts at
// the first, lasts 25 hours and admits exactly 3: the hour shown again is
// in it, and the day before ends at the first midnight. (Each decision is
// also compared with calendarModel, RetryAfter and ResetAfter included.)
func repeatedMidnight(e *env) {
	loc := zone(e.t, "America/Havana")
	l := ratelimit.PerDay(3, loc)
	back := midnightChange(e.t, loc, e.clock().AddDate(0, 0, 1), false) // the second 00:00
	first := back.Add(-time.Hour)
	day, before := first.In(loc).Format("2006-01-02"), first.Add(-time.Second).In(loc).Format("2006-01-02")
	next := (&calendarModel{l: l}).end(back)
	if got := next.Sub(first); got != 25*time.Hour {
		e.t.Fatalf("the day that starts at %v lasts %v, want 25h", first.In(loc), got)
	}
	admitted := dstScript(e, "repeated", l, []time.Time{
		first.Add(-2 * time.Hour), first.Add(-time.Second),
		first, first.Add(30 * time.Minute), back.Add(-time.Second), back, back.Add(30 * time.Minute),
		next.Add(-time.Second), next,
	})
	expectAdmitted(e, admitted, map[string]int{before: 3, day: 3})
	e.setTo(next.Add(time.Hour))
	e.expect("repeated-wait", l, 3, true, 0)
	if res := e.expect("repeated-wait", l, 1, false, 0); res.RetryAfter != 23*time.Hour {
		e.t.Fatalf("a denial an hour into the day after: RetryAfter %v, want 23h", res.RetryAfter)
	}
}

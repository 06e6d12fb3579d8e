package ratelimit_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// utc is an instant written in UTC, for the expected window bounds.
func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// TestCalendarWindowSkippedAndRepeatedMidnights: where a change of offset
// skips midnight, the day starts where the clock lands; where it shows
// midnight twice, at the first; a day the zone skips has no window.
func TestCalendarWindowSkippedAndRepeatedMidnights(t *testing.T) {
	santiago := mustZone(t, "America/Santiago")
	havana := mustZone(t, "America/Havana")
	azores := mustZone(t, "Atlantic/Azores")
	apia := mustZone(t, "Pacific/Apia")
	asuncion := mustZone(t, "America/Asuncion")
	chicago := mustZone(t, "America/Chicago")
	for _, c := range []struct {
		name       string
		l          ratelimit.Limit
		at         time.Time
		start, end time.Time
	}{
		// Santiago, 2011-08-20 23:59:59 -04 is followed by 2011-08-21 01:00 -03.
		{"the day before a skipped midnight ends where the clock lands", ratelimit.PerDay(3, santiago), utc(2011, 8, 21, 3, 30),
			utc(2011, 8, 20, 4, 0), utc(2011, 8, 21, 4, 0)},
		{"a day whose midnight is skipped starts at 01:00 and has 23 hours", ratelimit.PerDay(3, santiago), utc(2011, 8, 21, 4, 0),
			utc(2011, 8, 21, 4, 0), utc(2011, 8, 22, 3, 0)},
		// Santiago, 2011-05-07 23:59:59 -03 is followed by 23:00 -04: the hour before midnight twice.
		{"the hour before midnight shown twice: the day has 25 hours", ratelimit.PerDay(3, santiago), utc(2011, 5, 8, 3, 30),
			utc(2011, 5, 7, 3, 0), utc(2011, 5, 8, 4, 0)},
		// Havana, 2011-11-13 00:59:59 -04 is followed by 00:00 -05: midnight twice.
		{"the day before a repeated midnight ends at the first", ratelimit.PerDay(3, havana), utc(2011, 11, 13, 3, 59),
			utc(2011, 11, 12, 4, 0), utc(2011, 11, 13, 4, 0)},
		{"the second midnight is inside the day that began at the first", ratelimit.PerDay(3, havana), utc(2011, 11, 13, 5, 0),
			utc(2011, 11, 13, 4, 0), utc(2011, 11, 14, 5, 0)},
		// Havana, 2012-03-31 23:59:59 -05 is followed by 2012-04-01 01:00 -04.
		{"a month whose first midnight is skipped starts where the clock lands", ratelimit.PerMonth(3, havana), utc(2012, 4, 1, 5, 0),
			utc(2012, 4, 1, 5, 0), utc(2012, 5, 1, 4, 0)},
		{"the month before ends there", ratelimit.PerMonth(3, havana), utc(2012, 4, 1, 4, 59),
			utc(2012, 3, 1, 5, 0), utc(2012, 4, 1, 5, 0)},
		// Asuncion, 2011-10-01 23:59:59 -04 is followed by 2011-10-02 01:00 -03.
		{"Asuncion's skipped midnight", ratelimit.PerDay(3, asuncion), utc(2011, 10, 2, 3, 59),
			utc(2011, 10, 1, 4, 0), utc(2011, 10, 2, 4, 0)},
		// Azores: 2011-03-26 23:59:59 -01 then 03-27 01:00 +00; 2011-10-30 00:59:59 +00 then 00:00 -01.
		{"the Azores skip midnight in March", ratelimit.PerDay(3, azores), utc(2011, 3, 27, 1, 0),
			utc(2011, 3, 27, 1, 0), utc(2011, 3, 28, 0, 0)},
		{"and repeat it in October", ratelimit.PerDay(3, azores), utc(2011, 10, 30, 1, 30),
			utc(2011, 10, 30, 0, 0), utc(2011, 10, 31, 1, 0)},
		// Apia, 2011-12-29 23:59:59 -10 is followed by 2011-12-31 00:00 +14.
		{"the day before a skipped day ends where the clock lands", ratelimit.PerDay(3, apia), utc(2011, 12, 30, 9, 0),
			utc(2011, 12, 29, 10, 0), utc(2011, 12, 30, 10, 0)},
		{"the day after a skipped day", ratelimit.PerDay(3, apia), utc(2011, 12, 30, 10, 0),
			utc(2011, 12, 30, 10, 0), utc(2011, 12, 31, 10, 0)},
		{"the month of a skipped day has 30 days", ratelimit.PerMonth(3, apia), utc(2011, 12, 15, 0, 0),
			utc(2011, 12, 1, 10, 0), utc(2011, 12, 31, 10, 0)},
		// Past the listed transitions the zone's rule string decides, and
		// time.Time.ZoneBounds ends a leap year a day early there.
		{"the last day of a leap year under a zone's rule string", ratelimit.PerDay(3, chicago), utc(2040, 12, 31, 18, 0),
			utc(2040, 12, 31, 6, 0), utc(2041, 1, 1, 6, 0)},
		{"the first day after it", ratelimit.PerDay(3, chicago), utc(2041, 1, 1, 6, 0),
			utc(2041, 1, 1, 6, 0), utc(2041, 1, 2, 6, 0)},
		{"its last month", ratelimit.PerMonth(3, chicago), utc(2041, 1, 1, 5, 59),
			utc(2040, 12, 1, 6, 0), utc(2041, 1, 1, 6, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, end := c.l.Window(c.at)
			if !start.Equal(c.start) || !end.Equal(c.end) {
				t.Fatalf("Window(%v) = [%v, %v); want [%v, %v)", c.at.In(c.l.Zone), start.In(c.l.Zone), end.In(c.l.Zone), c.start.In(c.l.Zone), c.end.In(c.l.Zone))
			}
		})
	}
}

// TestCalendarWindowHoldsItsInstant: whatever the instant and the zone,
// even far from any real calendar, the window holds the instant and
// nothing panics.
func TestCalendarWindowHoldsItsInstant(t *testing.T) {
	zones := []*time.Location{nil, time.UTC, mustZone(t, "America/Santiago"), mustZone(t, "Pacific/Kiritimati"),
		time.FixedZone("ahead", 100*3600), time.FixedZone("behind", -100*3600), time.FixedZone("odd", 17*60+30)}
	instants := []time.Time{{}, time.Unix(0, 0), time.Unix(-1, 0), time.Date(2011, 8, 21, 4, 0, 0, 0, time.UTC),
		time.Date(-4000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(300000, 7, 1, 12, 0, 0, 0, time.UTC),
		time.Unix(math.MaxInt64/4, 0), time.Unix(math.MinInt64/4, 0)}
	for _, zone := range zones {
		for _, l := range []ratelimit.Limit{ratelimit.PerDay(1, zone), ratelimit.PerMonth(1, zone)} {
			for _, at := range instants {
				start, end := l.Window(at)
				if start.After(at) || !end.After(at) {
					t.Errorf("%v: Window(%v) = [%v, %v), which does not hold it", l, at, start, end)
				}
			}
		}
	}
}

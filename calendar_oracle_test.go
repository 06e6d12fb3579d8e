package ratelimit_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The calendar oracle: a brute-force civil calendar that knows nothing of
// time.Date or of offsets, only the local date the zone shows at each
// instant. The window of an instant u is [the first instant at which the
// zone has shown u's window's date (or month) or a later one, the first at
// which it shows a later one): the windows follow the largest local date
// seen so far, so a skipped midnight starts the day where the clock lands
// and a midnight shown twice starts it the first time. Between two changes
// of offset the local date only goes forward, so the oracle finds where it
// passes the largest one by bisection on whole seconds.
//
// By default the oracle checks every zone of the tz database, from two
// sources (see tzZones), around each of its changes of offset and each new
// year from 2008 to 2030 (three days either side for days, 32 for months)
// and in the first and last weeks; with RATELIMIT_CALENDAR_SWEEP=1 it
// walks every day and month of every zone from 2008 to 2030, and finds the
// changes of offset by scanning each hour instead of asking the zone.

const sweepEnv = "RATELIMIT_CALENDAR_SWEEP"

var (
	oracleFrom = time.Date(2008, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	oracleTo   = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// calendarKey is the local date (yyyymmdd) or month (yyyymm) of u in zone:
// a larger key is a later date.
func calendarKey(c ratelimit.Calendar, u int64, zone *time.Location) int {
	y, m, d := time.Unix(u, 0).In(zone).Date()
	if c == ratelimit.CalendarMonth {
		return y*100 + int(m)
	}
	return y*10000 + int(m)*100 + d
}

func offsetAt(u int64, zone *time.Location) int {
	_, off := time.Unix(u, 0).In(zone).Zone()
	return off
}

// askedChanges are the instants in [from, to) at which zone changes its
// offset, as the zone tells them.
func askedChanges(zone *time.Location, from, to int64) []int64 {
	var out []int64
	for u := from; ; {
		_, end := time.Unix(u, 0).In(zone).ZoneBounds()
		e := end.Unix()
		if end.IsZero() || e >= to {
			return out
		}
		if e <= u { // ZoneBounds ends a leap year a day early on its last day
			e = time.Unix(u, 0).UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Unix()
		} else if offsetAt(e, zone) != offsetAt(e-1, zone) {
			out = append(out, e)
		}
		u = e
	}
}

// scannedChanges are the instants in [from, to) at which zone changes its
// offset, found by reading the offset every hour and bisecting each change
// to the second.
func scannedChanges(zone *time.Location, from, to int64) []int64 {
	var out []int64
	prev := offsetAt(from, zone)
	for u := from; u < to; {
		next := min(u+3600, to-1)
		if next <= u {
			break
		}
		if offsetAt(next, zone) == prev {
			u = next
			continue
		}
		lo, hi := u, next // offset at lo is prev, at hi is not
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; offsetAt(mid, zone) == prev {
				lo = mid
			} else {
				hi = mid
			}
		}
		out = append(out, hi)
		prev, u = offsetAt(hi, zone), hi
	}
	return out
}

// boundary is where a window starts, and its key.
type boundary struct {
	at  int64
	key int
}

// oracleBoundaries are the window starts in (from, to), for a span whose
// first instant from has the largest local date seen so far (no change of
// offset within two days before it), given the changes of offset in it.
func oracleBoundaries(c ratelimit.Calendar, zone *time.Location, from, to int64, changes []int64) []boundary {
	top := calendarKey(c, from, zone)
	var out []boundary
	cuts := append(append([]int64{from}, changes...), to)
	for i := 0; i+1 < len(cuts); i++ {
		s, e := cuts[i], cuts[i+1]
		if s >= e {
			continue
		}
		if k := calendarKey(c, s, zone); k > top { // the clock jumped past a midnight
			out, top = append(out, boundary{s, k}), k
		}
		for calendarKey(c, e-1, zone) > top { // the wall clock is monotone in [s, e)
			lo, hi := s, e-1 // key(lo) <= top < key(hi), or lo == s
			if calendarKey(c, lo, zone) > top {
				hi = lo
			}
			for hi-lo > 1 {
				if mid := lo + (hi-lo)/2; calendarKey(c, mid, zone) > top {
					hi = mid
				} else {
					lo = mid
				}
			}
			k := calendarKey(c, hi, zone)
			out, top = append(out, boundary{hi, k}), k
			s = hi
		}
	}
	return out
}

// span is a stretch of instants the oracle walks, [from, to).
type span struct{ from, to int64 }

// oracleSpans are the spans of the default run: a few days around each
// change of offset and each new year (merged where they overlap), and the
// first and last weeks of the range (at least two, twice margin) for zones
// that have few or none.
func oracleSpans(changes []int64, margin int64) []span {
	var out []span
	add := func(from, to int64) {
		if n := len(out); n > 0 && from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, to)
			return
		}
		out = append(out, span{from, to})
	}
	ends := max(14*86400, 2*margin)
	add(oracleFrom, oracleFrom+ends)
	years := time.Unix(oracleTo, 0).UTC().Year() - time.Unix(oracleFrom, 0).UTC().Year()
	for _, c := range changes {
		for ; years > 0 && yearEnd(oracleTo, years) < c; years-- {
			e := yearEnd(oracleTo, years)
			add(e-margin, e+margin)
		}
		add(max(c-margin, oracleFrom), min(c+margin, oracleTo))
	}
	for ; years > 0; years-- {
		e := yearEnd(oracleTo, years)
		add(e-margin, e+margin)
	}
	add(oracleTo-ends, oracleTo)
	return out
}

// TestCalendarWindowEveryZone compares Limit.Window with the brute-force
// calendar for every zone of the tz database, 2008 to 2030: at the first
// and last nanosecond of each window, a second in, in its middle, and
// around each change of offset. It also checks what the Redis store
// assumes of consecutive windows (store/redis/window.lua): whole seconds,
// shorter than 2^22 s, and none shorter than half the next.
//
// Under -race, without RATELIMIT_SLOW_TESTS, each zone is compared once,
// from the two sources in turn (see alternateSources): the race detector
// makes this single goroutine's loop several times slower and finds
// nothing in it.
func TestCalendarWindowEveryZone(t *testing.T) {
	sweep := os.Getenv(sweepEnv) != ""
	zones := tzZones(t)
	if raceEnabled && !sweep && !slowTests() {
		zones = alternateSources(zones)
	}
	var windows, instants, changesSeen int
	for _, z := range zones {
		zone, name := z.loc, z.source+" "+z.loc.String()
		changes := askedChanges(zone, oracleFrom, oracleTo)
		if sweep {
			if scanned := scannedChanges(zone, oracleFrom, oracleTo); !slices.Equal(scanned, changes) {
				t.Fatalf("%s: the zone's changes of offset %v, scanned by the hour %v", name, changes, scanned)
			}
		}
		changesSeen += len(changes)
		for _, c := range []ratelimit.Calendar{ratelimit.CalendarDay, ratelimit.CalendarMonth} {
			spans := []span{{oracleFrom, oracleTo}}
			if !sweep && c == ratelimit.CalendarDay {
				spans = oracleSpans(changes, 3*86400)
			} else if !sweep {
				spans = oracleSpans(changes, 32*86400)
			}
			// By hand, not PerDay: PerDay would take the first of the
			// zone's two sources for both.
			l := ratelimit.Limit{Rate: 1, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow, Calendar: c, Zone: zone}
			if c == ratelimit.CalendarMonth {
				l.Period = 31 * 24 * time.Hour
			}
			for _, sp := range spans {
				var in []int64
				for _, ch := range changes {
					if ch >= sp.from && ch < sp.to {
						in = append(in, ch)
					}
				}
				b := oracleBoundaries(c, zone, sp.from, sp.to, in)
				w, n := checkWindows(t, l, b, in)
				windows, instants = windows+w, instants+n
				if t.Failed() {
					t.FailNow()
				}
			}
		}
	}
	t.Logf("%d zones, %d changes of offset, %d windows, %d instants compared (sweep %v)", len(zones), changesSeen, windows, instants, sweep)
}

// checkWindows compares l.Window with the windows between consecutive
// boundaries b, at their edges, middles and the changes of offset in them.
func checkWindows(t *testing.T, l ratelimit.Limit, b []boundary, changes []int64) (windows, instants int) {
	t.Helper()
	for i := 0; i+1 < len(b); i++ {
		start, end := time.Unix(b[i].at, 0), time.Unix(b[i+1].at, 0)
		at := []time.Time{start, start.Add(time.Second), start.Add(end.Sub(start) / 2), end.Add(-time.Nanosecond)}
		for _, ch := range changes {
			for _, u := range []int64{ch - 1, ch, ch + 1} {
				if u >= b[i].at && u < b[i+1].at {
					at = append(at, time.Unix(u, 0))
				}
			}
		}
		for _, u := range at {
			s, e := l.Window(u)
			instants++
			if !s.Equal(start) || !e.Equal(end) {
				t.Errorf("%v: Window(%v) = [%v, %v), want [%v, %v) (local %v to %v)", l, u.In(l.Zone), s.In(l.Zone), e.In(l.Zone), start.UTC(), end.UTC(), start.In(l.Zone), end.In(l.Zone))
				break
			}
		}
		windows++
		length := end.Sub(start)
		if length%time.Second != 0 || length >= 1<<22*time.Second {
			t.Errorf("%v: the window [%v, %v) is %v long, want whole seconds below 2^22", l, start.UTC(), end.UTC(), length)
		}
		if i+2 < len(b) {
			if next := time.Unix(b[i+2].at, 0).Sub(end); 2*length < next {
				t.Errorf("%v: the window [%v, %v) of %v is shorter than half the next (%v)", l, start.UTC(), end.UTC(), length, next)
			}
		}
	}
	return windows, instants
}

// yearEnd is the start (Unix seconds, UTC) of the year n years before the
// year of to.
func yearEnd(to int64, n int) int64 {
	return time.Date(time.Unix(to, 0).UTC().Year()-n+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
}

package ratelimit

import (
	"fmt"
	"math"
	"time"
)

// Calendar aligns the windows of a [FixedWindow] limit to calendar days or
// months in a time zone, for quotas such as "1,000 requests per day": the
// budget is whole again at midnight of the limit's Zone (or on the first of
// the month), and a day of a daylight-saving change is 23 or 25 hours long.
// The zero value, [NoCalendar], aligns windows to multiples of the Period
// since the Unix epoch.
type Calendar int

const (
	// NoCalendar is the plain fixed window, aligned to multiples of Period.
	NoCalendar Calendar = iota
	// CalendarDay resets the budget at every midnight of the limit's Zone.
	CalendarDay
	// CalendarMonth resets the budget at midnight of the first of every month.
	CalendarMonth
)

var calendarNames = [...]string{"none", "day", "month"}

// String returns the calendar's name: "none", "day" or "month".
func (c Calendar) String() string {
	if c < 0 || int(c) >= len(calendarNames) {
		return fmt.Sprintf("Calendar(%d)", int(c))
	}
	return calendarNames[c]
}

// nominal is the Period of a calendar limit: a day of 24 hours, a month of
// 31 days. It names the limit in RateLimit-Policy (w); the windows are the
// calendar's.
func (c Calendar) nominal() time.Duration {
	if c == CalendarMonth {
		return 31 * 24 * time.Hour
	}
	return 24 * time.Hour
}

// PerDay returns a quota of n requests per calendar day in zone, reset at
// its midnight; a nil zone is UTC. Keys of one limit share its zone: "per
// day" for each customer in the customer's own zone is one limit per zone.
// Zones compare by name: PerDay of two time.LoadLocation of one zone gives
// limits that are == (see [Limit.WithZone]).
func PerDay(n int, zone *time.Location) Limit {
	return Limit{Rate: n, Period: CalendarDay.nominal(), Algorithm: FixedWindow, Calendar: CalendarDay}.WithZone(zone)
}

// PerMonth returns a quota of n requests per calendar month in zone, reset
// at midnight of the first; a nil zone is UTC. Zones compare by name, as
// for [PerDay].
func PerMonth(n int, zone *time.Location) Limit {
	return Limit{Rate: n, Period: CalendarMonth.nominal(), Algorithm: FixedWindow, Calendar: CalendarMonth}.WithZone(zone)
}

// validateCalendar checks the calendar fields of l: a known Calendar on a
// FixedWindow with its nominal Period, and a Zone only with a Calendar.
func (l Limit) validateCalendar() error {
	switch {
	case l.Calendar == NoCalendar && l.Zone != nil:
		return fmt.Errorf("%w: a zone without a calendar", ErrInvalidLimit)
	case l.Calendar == NoCalendar:
		return nil
	case l.Calendar < NoCalendar || l.Calendar > CalendarMonth:
		return fmt.Errorf("%w: unknown calendar %d", ErrInvalidLimit, int(l.Calendar))
	case l.Algorithm != FixedWindow:
		return fmt.Errorf("%w: a calendar %s needs the fixed window, not the %s", ErrInvalidLimit, l.Calendar, l.Algorithm)
	case l.Period != l.Calendar.nominal():
		return fmt.Errorf("%w: a calendar %s has the period %v, not %v (use PerDay or PerMonth)", ErrInvalidLimit, l.Calendar, l.Calendar.nominal(), l.Period)
	}
	return nil
}

// Window returns the window of l's [FixedWindow] that holds t, from start
// (included) to end (excluded): with a [Calendar], a calendar day or month
// in l.Zone, from its local midnight to the next one, else the multiple of
// Period since the Unix epoch. A local midnight that the zone skips (a
// change of offset at 00:00 that moves the clock forward) is the instant
// the clock lands on; one the zone shows twice is the first, so the hour
// shown again counts in the day it belongs to. Stores decide a window's
// count with their own clock; Window tells a caller when the budget is
// whole again.
func (l Limit) Window(t time.Time) (start, end time.Time) {
	if l.Calendar == NoCalendar {
		p := int64(l.Period)
		if p <= 0 {
			return t, t
		}
		ns := t.UnixNano()
		s := ns - ns%p
		if ns < 0 && ns%p != 0 {
			s -= p
		}
		return time.Unix(0, s), time.Unix(0, s).Add(l.Period)
	}
	zone := l.Zone
	if zone == nil {
		zone = time.UTC
	}
	local := t.In(zone)
	if start, end, ok := l.Calendar.within(local); ok {
		return start, end
	}
	y, m, d := local.Date()
	if l.Calendar == CalendarMonth {
		d = 1
	}
	start = midnight(y, m, d, zone)
	for range 8 { // one step but where the clock went back across a midnight
		y, m, d = l.Calendar.next(y, m, d)
		end = midnight(y, m, d, zone)
		if end.After(t) {
			break
		}
		start = end // t is past the next midnight: its window is that one
	}
	return start, end
}

// within is the day or month of c that holds t (in its zone) where the
// zone keeps one offset from two days before it starts until after it
// ends, as almost everywhere, and false elsewhere: the window is then from
// the local midnights at the offset, as earlier offsets show earlier dates
// (they differ by less than two days).
func (c Calendar) within(t time.Time) (start, end time.Time, ok bool) {
	_, offset := t.Zone()
	if offset < -secondsPerDay || offset > secondsPerDay {
		return start, end, false
	}
	wall := t.Unix() + int64(offset)
	var s, e int64 // the window's bounds on the wall
	if c == CalendarMonth {
		y, m, _ := t.Date()
		s = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix()
		e = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	} else {
		s = wall - wall%secondsPerDay
		if wall%secondsPerDay < 0 {
			s -= secondsPerDay
		}
		e = s + secondsPerDay
	}
	s, e = s-int64(offset), e-int64(offset)
	// Not t.ZoneBounds: the start it reports may be before the change of
	// offset (from a zone's rule string, in the year the rule takes over).
	if before, until := period(s-2*secondsPerDay, t.Location()); before != offset || until <= e {
		return start, end, false
	}
	return time.Unix(s, 0).In(t.Location()), time.Unix(e, 0).In(t.Location()), true
}

// next is the civil date that starts the window after the one of the
// date y-m-d: the next day, or the first of the next month.
func (c Calendar) next(y int, m time.Month, d int) (int, time.Month, int) {
	if c == CalendarMonth {
		y, m, _ = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Date()
		return y, m, 1
	}
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Date()
}

// midnight is the local midnight of the date y-m-d in zone: the first
// instant whose local date is that date or a later one. Where the zone
// skips the date's 00:00 it is the instant the clock jumps to; where 00:00
// happens twice it is the first; where it skips the whole date (Pacific/Apia,
// 2011-12-30) it is the next date's midnight. time.Date answers none of
// these reliably ("the choice of time zone, and therefore the time, is not
// guaranteed"), so midnight walks the zone's periods instead: in a period
// of offset o, the wall clock reads the date at the instant date−o.
func midnight(y int, m time.Month, d int, zone *time.Location) time.Time {
	wall := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() // the date's 00:00 on the wall
	// Begin two days before, where the local date is earlier (offsets are
	// within a day), stepping back further for zones that are not.
	u := wall - 2*secondsPerDay
	offset, end := period(u, zone)
	for i := 0; i < 64 && u+int64(offset) >= wall; i++ {
		u -= 2 * secondsPerDay
		offset, end = period(u, zone)
	}
	for range 1 << 12 { // a few periods in any real zone
		c := max(wall-int64(offset), u) // u itself: the clock jumped past 00:00 at u
		if c < end {
			return time.Unix(c, 0).In(zone)
		}
		u = end
		offset, end = period(u, zone)
	}
	return time.Unix(u, 0).In(zone)
}

// period is the offset of zone at u (Unix seconds), and an instant after u
// until which it holds (math.MaxInt64 for good): where the offset changes,
// or any instant before. (The ends ZoneBounds reports are never late; its
// starts may be early.) It corrects time.Time.ZoneBounds, which in the
// years a zone's rule string covers ends a leap year's last period a day
// early, at or before u on the year's last day (it adds 365 days to the
// year's start): that period holds at least until the year is over, the
// next midnight UTC.
func period(u int64, zone *time.Location) (offset int, end int64) {
	at := time.Unix(u, 0).In(zone)
	_, offset = at.Zone()
	_, e := at.ZoneBounds()
	switch {
	case e.IsZero():
		return offset, math.MaxInt64
	case e.Unix() <= u:
		day := u / secondsPerDay
		if u%secondsPerDay < 0 {
			day--
		}
		return offset, (day + 1) * secondsPerDay
	}
	return offset, e.Unix()
}

const secondsPerDay = 24 * 60 * 60

// Calendars is implemented by stores that align the windows of a limit
// with a [Calendar] to its days or months, as store/memory and store/redis
// do (Redis by its own clock, from boundaries the store sends around the
// app's). [New] refuses a calendar limit on a store that does not say it
// does, rather than count it in the wrong windows; a wrapper of a store
// should forward Calendars.
type Calendars interface {
	// Calendars reports whether the store decides calendar limits.
	Calendars() bool
}

// decidesCalendars reports whether s says it is [Calendars].
func decidesCalendars(s Store) bool {
	c, ok := s.(Calendars)
	return ok && c.Calendars()
}

// zoneName is the name of l's Zone, "UTC" when nil.
func (l Limit) zoneName() string {
	if l.Zone == nil {
		return "UTC"
	}
	return l.Zone.String()
}

// checkCalendars refuses calendar limits on a store, or a fallback store,
// that does not decide them.
func (l *Limiter) checkCalendars() error {
	for _, p := range l.policies {
		calendar := p.limit.Calendar != NoCalendar
		for _, pl := range p.plans {
			calendar = calendar || pl.limit.Calendar != NoCalendar
		}
		if !calendar {
			continue
		}
		if !decidesCalendars(l.store) {
			return fmt.Errorf("ratelimit: New: policy %q is a calendar quota (%v), and the store does not decide calendar windows (see Calendars)", p.name, p.limit)
		}
		if l.fallback != nil && !decidesCalendars(l.fallback) {
			return fmt.Errorf("ratelimit: New: policy %q is a calendar quota (%v), and the fallback store does not decide calendar windows (see Calendars)", p.name, p.limit)
		}
	}
	return nil
}

package rules

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimit-go/ratelimit"
)

// calendarPeriod is the calendar of a period written "day" or "month", and
// ratelimit.NoCalendar for any other (a duration).
func calendarPeriod(n *yaml.Node) ratelimit.Calendar {
	if n.Kind != yaml.ScalarNode {
		return ratelimit.NoCalendar
	}
	switch n.Value {
	case "day":
		return ratelimit.CalendarDay
	case "month":
		return ratelimit.CalendarMonth
	}
	return ratelimit.NoCalendar
}

// zone loads the IANA time zone named by n, such as "Europe/Berlin".
func (p *parser) zone(n *yaml.Node, at place) (*time.Location, error) {
	s, err := p.str(n, at)
	if err != nil {
		return nil, err
	}
	if s == "" || s == "Local" {
		return nil, p.fail(n, at, "%q: want an IANA time zone such as Europe/Berlin or UTC", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, p.fail(n, at, "%q is not a time zone this system knows (want an IANA name such as Europe/Berlin)", s)
	}
	return loc, nil
}

// calendar completes a limit of period day or month: its nominal period
// and the fixed window, which an algorithm given in the file (algorithm,
// the limit's own field) must be; one from the defaults gives way.
func (p *parser) calendar(l *ratelimit.Limit, algorithm *yaml.Node, at place) error {
	if l.Calendar == ratelimit.NoCalendar {
		return nil
	}
	if algorithm != nil && l.Algorithm != ratelimit.FixedWindow {
		return p.fail(algorithm, at.in("algorithm"), "a period of %s counts in a fixed window, not the %v", l.Calendar, l.Algorithm)
	}
	zone := l.Zone
	if l.Calendar == ratelimit.CalendarMonth {
		*l = ratelimit.PerMonth(l.Rate, zone)
	} else {
		*l = ratelimit.PerDay(l.Rate, zone)
	}
	return nil
}

package memory

import (
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// Calendars reports true: the store aligns the windows of a limit with a
// ratelimit.Calendar to the days or months of its zone, by its own clock
// (see ratelimit.Calendars).
func (*Store) Calendars() bool { return true }

// fixedBounds is the end of the window of fixed window limit l that holds
// now (Unix ns), and the time left until then: a calendar day or month for
// a calendar limit, else a multiple of the period since the epoch, its end
// saturated at the int64 range.
func fixedBounds(now int64, l ratelimit.Limit) (end int64, left time.Duration) {
	if l.Calendar != ratelimit.NoCalendar {
		_, e := l.Window(time.Unix(0, now))
		return e.UnixNano(), time.Duration(e.UnixNano() - now)
	}
	period := int64(l.Period)
	start := windowStart(now, period)
	return addSat(start, period), time.Duration(period - (now - start))
}

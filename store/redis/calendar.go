package redisstore

import (
	"errors"
	"strconv"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// Calendars reports true: the store decides the windows of a limit with a
// ratelimit.Calendar by Redis's clock (see ratelimit.Calendars).
func (*Store) Calendars() bool { return true }

// calendarArgs are the script arguments of calendar limit l: the app sends
// the windows around its own clock (in Redis's, where the store has seen
// how far apart they are), and window.lua picks the one that holds Redis
// TIME. The rate argument carries the current and the next window's
// lengths in seconds (at most 31 days and an hour, below 2^22) packed as
// -(cur·2^22 + next), negative to tell it from a rate; the period argument
// is the end of the current window in µs.
func (s *Store) calendarArgs(l ratelimit.Limit) [3]any {
	var now time.Time
	if s.now != nil {
		now = s.now() // the scripts' clock too
	} else if t, ok := s.skew.deadline(time.Now()); ok {
		now = time.UnixMicro(t)
	} else {
		now = time.Now()
	}
	start, end := l.Window(now)
	_, next := l.Window(end)
	cur := int64(end.Sub(start) / time.Second)
	nxt := int64(next.Sub(end) / time.Second)
	return [3]any{
		strconv.FormatInt(-(cur<<22 + nxt), 10),
		l.Capacity(),
		end.UnixMicro(),
	}
}

// missed is the allowed value of a take whose calendar windows did not
// hold Redis's clock: it took nothing.
const missed = -2

// errMissedWindow is a decision answered missed: the store sends it again,
// once, with windows around Redis's clock.
var errMissedWindow = errors.New("ratelimit/redis: Redis's clock is outside the calendar windows sent")

package memory

import (
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// slidingLog is one key's log of admitted requests within the trailing
// period, oldest first, in a ring. It holds at most Rate entries (each
// request takes at least one token), so at most 16·Rate bytes and never
// more than 16·ratelimit.MaxSlidingLogRate.
type slidingLog struct {
	ring        []logEntry // len is the ring's capacity
	head, count int
	sum         int64 // tokens in the log
}

type logEntry struct {
	at int64 // Unix ns
	n  int64
}

func (g *slidingLog) at(i int) *logEntry { return &g.ring[(g.head+i)%len(g.ring)] }

// push appends e to the log of a limit of rate tokens: the ring grows to
// at most rate entries (one, for a block's log of one request per period),
// or one more than it holds (a rate lowered since).
func (g *slidingLog) push(e logEntry, rate int) {
	if g.count == len(g.ring) {
		ring := make([]logEntry, max(g.count+1, min(max(4, 2*len(g.ring)), rate)))
		for i := range g.count {
			ring[i] = *g.at(i)
		}
		g.ring, g.head = ring, 0
	}
	*g.at(g.count) = e
	g.count++
	g.sum += e.n
}

// clone returns a copy of g on the heap, with a ring of its own.
func (g *slidingLog) clone() *slidingLog {
	c := &slidingLog{ring: make([]logEntry, max(1, g.count)), count: g.count, sum: g.sum}
	for i := range g.count {
		c.ring[i] = *g.at(i)
	}
	return c
}

// window returns the index of the oldest entry after cutoff, in the
// window, and the tokens of the entries from it on.
func (g *slidingLog) window(cutoff int64) (first int, sum int64) {
	sum = g.sum
	for first < g.count && g.at(first).at <= cutoff {
		sum -= g.at(first).n
		first++
	}
	return first, sum
}

// trim drops the entries at or before cutoff, which have left the window.
func (g *slidingLog) trim(cutoff int64) {
	for g.count > 0 && g.at(0).at <= cutoff {
		g.sum -= g.at(0).n
		g.head = (g.head + 1) % len(g.ring)
		g.count--
	}
}

// takeLog is the sliding log: at most Rate tokens within any trailing
// period (now − Period, now]. It returns the cell's new expiry, when the
// newest entry leaves the window (saturated at math.MaxInt64).
// store/redis/log.lua mirrors it.
func takeLog(g *slidingLog, now int64, l ratelimit.Limit, n int) (int64, ratelimit.Result) {
	period := int64(l.Period)
	if g.count > 0 {
		now = max(now, g.at(g.count-1).at) // keep the log in time order
	}
	// The entries that have left the window are dropped by a commit only,
	// as log.lua drops them: a report or a denial under a limit of a
	// shorter period (a LimitFunc's) changes nothing another limit sees.
	first, sum := g.window(now - period)
	res := ratelimit.Result{Limit: l}
	if sum+int64(n) <= int64(l.Rate) {
		res.Allowed = true
		if n > 0 {
			g.trim(now - period)
			g.push(logEntry{at: now, n: int64(n)}, l.Rate)
			sum += int64(n)
		}
	} else {
		// Wait until enough of the oldest entries have left.
		need := sum + int64(n) - int64(l.Rate)
		for i := first; ; i++ {
			e := g.at(i)
			if need -= e.n; need <= 0 {
				res.RetryAfter = time.Duration(period - (now - e.at))
				break
			}
		}
	}
	res.Remaining = max(0, l.Rate-int(sum)) // a lowered Rate may be below the sum
	exp := now
	if g.count > 0 {
		newest := g.at(g.count - 1).at
		exp = addSat(newest, period)
		if sum > 0 { // the newest is in the window, as log.lua's reset
			res.ResetAfter = time.Duration(period - (now - newest))
		}
	}
	return exp, res
}

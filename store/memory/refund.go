package memory

import (
	"context"
	"math"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Refunder = (*Store)(nil)

// RefundN implements [ratelimit.Refunder] under the key's shard lock, by
// the rules of each algorithm that [ratelimit.Refunder] states. A key the
// store does not hold is full (it was dropped, or never taken from): the
// refund gives nothing back and reports a full budget. It does not
// allocate for a key the store holds. The time the call waits for the
// lock counts into age: the take is no older than age when the call
// starts.
func (s *Store) RefundN(ctx context.Context, key string, limit ratelimit.Limit, n int, age time.Duration) (res ratelimit.Result, err error) {
	called := s.now()
	h := s.hash(key, limit.Algorithm)
	sh := &s.shards[h>>s.shift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.checked(key, limit, n) || age < 0 {
		if err := ratelimit.ValidateRefund(key, limit, n, age); err != nil {
			return ratelimit.Result{}, err
		}
		sh.last = lastLimit{limit: limit, capacity: limit.Capacity(), rate: limit.PerSecondRate(), keep: keepOf(limit)}
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	now := s.now()
	if now > called {
		age = time.Duration(addSat(int64(age), now-called))
	}
	i, found := sh.cells.find(h)
	if !found {
		_, res = sh.decide(h, now, limit, 0) // a new key's report
		return refunded(res), nil
	}
	sl := &sh.cells.slots[i]
	switch limit.Algorithm {
	case ratelimit.FixedWindow:
		sl.c = refundWindow(sl.c, now, limit, n, age)
		_, res = fixedWindow(sl.c, false, now, limit, 0)
	case ratelimit.SlidingWindow:
		sl.c = refundSliding(sl.c, now, limit, n, age)
		_, res = slidingWindow(sl.c, false, now, limit, 0)
	case ratelimit.SlidingLog:
		var one [1]logEntry
		g, in := sh.kept(h, true), inCell(true, sl.c, &one)
		if g == nil {
			g = &in
		}
		exp := refundLog(g, now, limit, n, age)
		if g.count == 0 { // an empty log is a new key's: drop it
			sh.cells.deleteAt(i)
			delete(sh.logs, h)
		} else {
			sl.c.exp = exp // a log in its cell keeps its one request
		}
		_, res = takeLog(g, now, limit, 0)
	default:
		rate, burst := sh.last.rate, float64(sh.last.capacity)
		refundTokens(&sl.c, now, rate, burst, n)
		takeTokensAt(&sl.c, false, now, limit, rate, burst, 0, &res)
	}
	return refunded(res), nil
}

// refunded is a report as a refund returns it: allowed, without a wait,
// even for a bucket still below empty, whose report alone would deny.
func refunded(res ratelimit.Result) ratelimit.Result {
	res.Allowed, res.RetryAfter = true, 0
	return res
}

// refundTokens gives n tokens back to the bucket in c at now, up to its
// burst: a bucket below empty (booked ahead) climbs back by n.
// store/redis/refund.lua's refundBucket mirrors it.
func refundTokens(c *cell, now int64, rate, burst float64, n int) {
	if n == 0 {
		return // a report: nothing to write
	}
	tokens := min(advance(c, false, now, rate, burst)+float64(n), burst)
	reset := ceilDuration(burst-tokens, rate)
	*c = cell{x: tokens, at: now, exp: addSat(now, addSat(int64(reset), int64(expiryMargin)))}
}

// windowBounds is the window of fixed window limit l that holds now (Unix
// ns): its start and its end, as fixedWindow keeps it in a cell's exp.
func windowBounds(now int64, l ratelimit.Limit) (start, end int64) {
	if l.Calendar != ratelimit.NoCalendar {
		s, e := l.Window(time.Unix(0, now))
		return s.UnixNano(), e.UnixNano()
	}
	period := int64(l.Period)
	start = windowStart(now, period)
	return start, addSat(start, period)
}

// refundWindow gives n back to the fixed window count in c at now, if the
// take, at most age ago, was surely in now's window: else the count may be
// another window's, and c is returned as it was. The count never goes
// below 0. store/redis/refund.lua's refundWindow mirrors it.
func refundWindow(c cell, now int64, l ratelimit.Limit, n int, age time.Duration) cell {
	start, end := windowBounds(now, l)
	if c.exp != end || int64(age) > now-start {
		return c // another window's count, or a take that may be in one
	}
	c.at = max(0, c.at-int64(n))
	return c
}

// refundSliding gives n back to the sliding window counts in c at now:
// to the current window's count if the take, at most age ago, was surely
// in it; to the previous window's if the take may be in either (its share
// of the estimate is the smaller gift); nothing if it may be older. Counts
// never go below 0. store/redis/refund.lua's refundSliding mirrors it.
func refundSliding(c cell, now int64, l ratelimit.Limit, n int, age time.Duration) cell {
	period := int64(l.Period)
	start := windowStart(now, period)
	window := float64(start / period)
	prev, curr, ok, _ := slidingCounts(c, start, period)
	if !ok {
		return c // both counts have left the trailing period
	}
	elapsed := now - start
	switch {
	case int64(age) <= elapsed:
		curr = max(0, curr-float64(n))
	case int64(age)-elapsed <= period:
		prev = max(0, prev-float64(n))
	default:
		return c
	}
	return cell{exp: addSat(start, 2*period), at: packCounts(curr, prev), x: window}
}

// refundLog removes up to n tokens from the entries of the log no older
// than age at now, the oldest of them first (an entry of more tokens than
// are left to give back keeps the rest), and returns the cell's new
// expiry, when the newest entry leaves the window. An entry older than
// age is never touched: it cannot be the take's. The oldest entry that
// may be the take's is the one that leaves the window first, so removing
// it gives back no more than removing the take's own would.
// A take that may be older than the period gives nothing back: its entry
// may have left the window. store/redis/refund.lua's refundLog mirrors it.
func refundLog(g *slidingLog, now int64, l ratelimit.Limit, n int, age time.Duration) int64 {
	period := int64(l.Period)
	if g.count > 0 {
		now = max(now, g.at(g.count-1).at) // the log's time order, as takeLog keeps it
	}
	if int64(age) >= period {
		// The take may have left the window, its entry dropped by a commit
		// since: another request's entry is not its to give back.
		if g.count == 0 {
			return now
		}
		return addSat(g.at(g.count-1).at, period)
	}
	g.trim(now - period)
	since := subSat(now, int64(age))
	j := 0 // the oldest entry no older than age
	for j < g.count && g.at(j).at < since {
		j++
	}
	left, k := int64(n), j // entries j..k-1 are given back whole
	for ; k < g.count && left > 0; k++ {
		e := g.at(k)
		if e.n > left {
			e.n -= left
			g.sum -= left
			break
		}
		left -= e.n
		g.sum -= e.n
	}
	// Close the gap of the entries given back whole.
	for i := k; i < g.count; i++ {
		*g.at(j + i - k) = *g.at(i)
	}
	g.count -= k - j
	if g.count == 0 {
		return now
	}
	return addSat(g.at(g.count-1).at, period)
}

// subSat returns a−b for b >= 0, or math.MinInt64 where that overflows.
func subSat(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

package memory

import (
	"math"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// windowStart is the start of now's window: windows are aligned to
// multiples of the period since the Unix epoch.
func windowStart(now, period int64) int64 {
	start := now - now%period
	if now < 0 && now%period != 0 {
		start -= period
	}
	return start
}

// fixedWindow is the fixed window counter: at most Rate per aligned window
// (a calendar limit's days or months: see fixedBounds).
// The cell keeps the count in at and the window's end in exp, after which
// the count no longer matters; an end beyond the int64 range is saturated,
// which still tells the current window from the others, as only the
// window that holds now can end there. store/redis/window.lua mirrors it.
func fixedWindow(c cell, fresh bool, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	end, _ := fixedBounds(now, l) // a calendar limit's day or month, else aligned to the period
	var count int64
	ends := end // when the count told of ends
	switch {
	case fresh || c.exp <= now: // no count, or an ended window's
	case c.exp == end:
		count = c.at
	case c.at > 0:
		// a window of another Period, or calendar, that has not ended (a
		// plan changed): its count carries over, as a key keeps one
		// budget, and ends with it
		count, ends = c.at, c.exp
	}
	res := ratelimit.Result{Limit: l}
	if count+int64(n) <= int64(l.Rate) {
		res.Allowed = true
		count += int64(n)
		if n > 0 { // written with this window's takes, until the later end: never cut short
			ends = max(ends, end)
		}
		c = cell{exp: ends, at: count}
	} else {
		res.RetryAfter = time.Duration(ends - now) // the window after it takes n <= Rate
	}
	res.Remaining = max(0, l.Rate-int(count)) // a lowered Rate may be below the count
	if count > 0 {
		res.ResetAfter = time.Duration(ends - now)
	}
	return c, res
}

// slidingWindow is the sliding window counter: the estimate
// prev·(1 − elapsed/Period) + curr of the trailing period stays at most
// Rate. The cell keeps both counts in at (see packCounts), the window's
// number since the epoch in x (exact: below 2^53 for a Period of at least
// a millisecond), and in exp the end of the window after the current one,
// when both counts stop mattering, saturated at math.MaxInt64.
// store/redis/swindow.lua mirrors it.
func slidingWindow(c cell, fresh bool, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	period := int64(l.Period)
	start := windowStart(now, period)
	window := float64(start / period)
	var prev, curr float64
	if !fresh {
		var held bool
		var s int64
		if prev, curr, held, s = slidingCounts(c, start, period); !held && s > start-period {
			// a window of another Period (a plan changed) begun within
			// this one's trailing period: every request it counted is
			// this window's, as a key keeps one budget whatever its plan
			cellCurr, cellPrev := unpackCounts(c.at)
			prev, curr = 0, cellPrev+cellCurr
		}
	}
	elapsed := now - start
	weight := 1 - float64(elapsed)/float64(period)
	rate := float64(l.Rate)

	res := ratelimit.Result{Limit: l}
	if prev*weight+curr+float64(n) <= rate {
		res.Allowed = true
		curr += float64(n)
		if n > 0 {
			c = cell{exp: addSat(start, 2*period), at: packCounts(curr, prev), x: window}
		}
	} else {
		res.RetryAfter = time.Duration(slidingRetry(prev, curr, float64(n), rate, elapsed, period))
	}
	res.Remaining = max(0, int(math.Floor(rate-(prev*weight+curr))))
	switch {
	case curr > 0:
		res.ResetAfter = time.Duration(2*period - elapsed)
	case prev > 0:
		res.ResetAfter = time.Duration(period - elapsed)
	}
	return c, res
}

// slidingCounts reads the counts of the cell c of a sliding window as of
// the window that starts at start: the previous window's and the current
// one's, whether c held counts of either, and the start of its window. A
// window is known by its start, as store/redis/swindow.lua keeps it.
func slidingCounts(c cell, start, period int64) (prev, curr float64, ok bool, s int64) {
	cellCurr, cellPrev := unpackCounts(c.at)
	switch s = cellStart(c, period); s {
	case start:
		return cellPrev, cellCurr, true, s
	case start - period:
		return cellCurr, 0, true, s
	}
	return 0, 0, false, s
}

// cellStart is the start of the window whose counts the sliding window's
// cell c keeps, whatever the Period they were counted under: the cell
// keeps the window's number x and the end of the window after it,
// (x+2)·Period, so both give the Period. A cell of this period gives
// x·period.
func cellStart(c cell, period int64) int64 {
	n := int64(c.x) + 2
	if n <= 0 || c.exp == math.MaxInt64 || c.exp%n != 0 {
		return int64(c.x) * period // before the epoch, or saturated: as if of this period
	}
	return int64(c.x) * (c.exp / n)
}

// packCounts puts a sliding window's two counts, each at most
// ratelimit.MaxRate, in one int64: curr in the low 32 bits, prev above.
func packCounts(curr, prev float64) int64 { return int64(curr) | int64(prev)<<32 }

// unpackCounts is the inverse of packCounts.
func unpackCounts(at int64) (curr, prev float64) {
	return float64(uint32(at)), float64(at >> 32)
}

// slidingRetry is how long after now (elapsed into its window) the estimate
// leaves room for n: later in this window if prev's share shrinks enough,
// else in the next window, where curr becomes prev.
func slidingRetry(prev, curr, n, rate float64, elapsed, period int64) int64 {
	if room := rate - curr - n; room >= 0 && prev > 0 {
		// prev·(1 − e/P) <= room  ⇔  e >= P·(1 − room/prev)
		e := int64(math.Ceil(float64(period) * (1 - room/prev)))
		return max(e-elapsed, 1)
	}
	e := int64(0)
	if curr > rate-n {
		e = int64(math.Ceil(float64(period) * (1 - (rate-n)/curr)))
	}
	return period - elapsed + e
}

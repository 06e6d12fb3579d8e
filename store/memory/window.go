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

// fixedWindow is the fixed window counter: at most Rate per aligned window.
// The cell keeps the count in at and the window's end in exp, after which
// the count no longer matters. store/redis/window.lua mirrors it.
func fixedWindow(c cell, fresh bool, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	period := int64(l.Period)
	end := windowStart(now, period) + period
	count := c.at
	if fresh || c.exp != end {
		count = 0 // another window's count
	}
	res := ratelimit.Result{Limit: l}
	if count+int64(n) <= int64(l.Rate) {
		res.Allowed = true
		count += int64(n)
		c = cell{exp: end, at: count}
	} else {
		res.RetryAfter = time.Duration(end - now) // the next window takes n <= Rate
	}
	res.Remaining = l.Rate - int(count)
	if count > 0 {
		res.ResetAfter = time.Duration(end - now)
	}
	return c, res
}

// slidingWindow is the sliding window counter: the estimate
// prev·(1 − elapsed/Period) + curr of the trailing period stays at most
// Rate. The cell keeps curr in at, prev in x, and in exp the end of the
// window after the current one, when both counts stop mattering.
// store/redis/swindow.lua mirrors it.
func slidingWindow(c cell, fresh bool, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	period := int64(l.Period)
	start := windowStart(now, period)
	var prev, curr float64
	if !fresh {
		switch c.exp - 2*period { // the start of the cell's window
		case start:
			prev, curr = c.x, float64(c.at)
		case start - period:
			prev = float64(c.at)
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
			c = cell{exp: start + 2*period, at: int64(curr), x: prev}
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

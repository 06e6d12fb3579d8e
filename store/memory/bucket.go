package memory

import (
	"math"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// takeTokens is the token bucket: it decides whether n tokens can be taken
// at now (Unix nanoseconds) from the bucket in c under l, and returns the
// bucket after the decision. fresh means the key has no state yet: a new
// bucket starts full.
//
// It follows golang.org/x/time/rate's reserveN step for step, in the same
// floating-point operations, so that its decisions are identical;
// store/redis/bucket.lua mirrors it line for line (in microseconds). A denied
// request and n == 0 leave the bucket as it was.
func takeTokens(c cell, fresh bool, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	var res ratelimit.Result
	takeTokensAt(&c, fresh, now, l, l.PerSecondRate(), float64(l.Capacity()), n, &res)
	return c, res
}

// takeTokensAt is takeTokens in place, for the hot path: it writes the
// decision to res and the bucket after it to c, with l's rate
// (l.PerSecondRate()) and burst (l.Capacity()) worked out by the caller,
// which keeps them from one call to the next.
func takeTokensAt(c *cell, fresh bool, now int64, l ratelimit.Limit, rate, burst float64, n int, res *ratelimit.Result) {
	tokens := advance(c, fresh, now, rate, burst) // reserve.go; inlined

	*res = ratelimit.Result{Limit: l}
	left := tokens - float64(n)
	// x/time/rate admits when the wait for the missing part truncates to 0 ns.
	if left >= 0 || (-left/rate)*1e9 < 1 {
		res.Allowed = true
		tokens = left
	} else {
		res.RetryAfter = ceilDuration(-left, rate)
	}
	res.Remaining = floorTokens(tokens)
	res.ResetAfter = ceilDuration(burst-tokens, rate)
	if res.Allowed && n > 0 {
		*c = cell{x: tokens, at: now, exp: addSat(now, addSat(int64(res.ResetAfter), int64(expiryMargin)))}
	}
}

// expiryMargin is how long a key is kept past the instant its state equals
// a new key's, so that rounding never drops a key a hair too early. The Redis
// store's PEXPIRE has the same margin.
const expiryMargin = time.Millisecond

// ceilDuration is the time to refill tokens at rate tokens per second,
// rounded up to the nanosecond; 0 for tokens <= 0.
func ceilDuration(tokens, rate float64) time.Duration {
	if tokens <= 0 {
		return 0
	}
	d := math.Ceil(tokens / rate * 1e9)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// floorTokens is the number of whole tokens, never negative.
func floorTokens(tokens float64) int {
	if tokens < 1 {
		return 0
	}
	return int(tokens)
}

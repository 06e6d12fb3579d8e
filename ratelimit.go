// Package ratelimit limits how often HTTP clients may call a server: a
// standard func(http.Handler) http.Handler middleware keys each request
// (client address, API key, user, route), takes tokens from a [Store], sets
// rate-limit headers and answers 429 with Retry-After when the key is out
// of budget.
//
//	store := memory.New()
//	http.Handle("/", ratelimit.Middleware(store, ratelimit.PerMinute(100))(handler))
//
//	api, err := ratelimit.New(store, ratelimit.PerSecond(10),
//		ratelimit.WithName("api"),
//		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")),
//		ratelimit.WithPolicy(ratelimit.Policy{Name: "per-ip", Limit: ratelimit.PerMinute(120), Key: ratelimit.KeyByIP()}))
//
// A [Limit] says how many requests (tokens) a key may spend per period and
// with which [Algorithm]; a Store keeps each key's budget and decides, one
// atomic step at a time, whether a request may take its tokens. The memory
// store (package store/memory) serves one process; the Redis store (package
// store/redis) shares budgets between many app servers, with a time budget,
// a circuit breaker, a local deny cache and an optional fallback for the
// days it is slow or down. Stores can be called directly too:
//
//	res, err := store.AllowN(ctx, "client-42", ratelimit.PerMinute(100), 1)
//	if err == nil && !res.Allowed {
//		// answer 429, retry after res.RetryAfter
//	}
//
// Outside HTTP, [Limiter.AllowN] decides on a key of your own through the
// same pass. This package needs only the standard library.
package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Algorithm chooses how a [Limit] counts requests. The zero value is
// [TokenBucket].
type Algorithm int

const (
	// TokenBucket holds up to Burst tokens and refills them continuously at
	// Rate per Period, keeping fractions of a token. A new key starts full.
	// Its decisions equal those of golang.org/x/time/rate's
	// NewLimiter(Rate/Period, Burst).AllowN on the same timeline.
	TokenBucket Algorithm = iota
	// FixedWindow admits at most Rate per window; windows are aligned to
	// multiples of Period since the Unix epoch. Burst is ignored. It admits
	// up to 2·Rate across a window edge.
	FixedWindow
	// SlidingWindow estimates the requests of the trailing Period from two
	// fixed windows, prev·(1 − elapsed/Period) + curr, and keeps the estimate
	// at most Rate. O(1) memory per key. Burst is ignored.
	SlidingWindow
	// SlidingLog is exact: at most Rate within any trailing Period. It keeps
	// one timestamp per admitted token, so Rate is bounded by
	// [MaxSlidingLogRate]. Burst is ignored.
	SlidingLog
)

// Bounds of a valid [Limit], far beyond any real policy, so that every store
// decides every valid Limit identically, with exact integers (below 2^53,
// as Redis's Lua numbers need) and durations that never overflow.
const (
	// MaxRate is the largest Rate and the largest Burst: about a billion.
	MaxRate = 1 << 30
	// MinPeriod is the shortest Period: one millisecond, the resolution of
	// Redis expiries. PerSecond(10_000) is written so, not as 1 per 100µs.
	MinPeriod = time.Millisecond
	// MaxPeriod is the longest Period, and the longest a token bucket may
	// take to fill from empty (Burst·Period/Rate): 100 years of 365 days.
	MaxPeriod = 100 * 365 * 24 * time.Hour
	// MaxSlidingLogRate is the largest Rate a [SlidingLog] limit accepts; the log
	// of one key holds at most Rate timestamps.
	MaxSlidingLogRate = 10_000
)

var algorithmNames = [...]string{"token bucket", "fixed window", "sliding window", "sliding log"}

// String returns the algorithm's name in words, such as "token bucket".
func (a Algorithm) String() string {
	if a < 0 || int(a) >= len(algorithmNames) {
		return "Algorithm(" + strconv.Itoa(int(a)) + ")"
	}
	return algorithmNames[a]
}

// Limit is a budget: Rate requests (tokens) per Period.
//
// The zero value is not a valid Limit; build one with [PerSecond],
// [PerMinute] or [PerHour], or fill the fields and call [Limit.Validate].
type Limit struct {
	Rate   int           // requests (tokens) per Period; must be positive
	Period time.Duration // must be positive
	// Burst is the token bucket's capacity, the most a key may spend at once
	// after a quiet spell. 0 means Rate. The window algorithms ignore it.
	Burst     int
	Algorithm Algorithm // TokenBucket by default
	// Calendar, with the FixedWindow algorithm, aligns the windows to
	// calendar days or months in Zone instead of multiples of Period; see
	// [PerDay] and [PerMonth].
	Calendar Calendar
	// Zone is the time zone of a Calendar's days; nil is UTC. Limits
	// compare with ==, so set it with [PerDay], [PerMonth] or
	// [Limit.WithZone], which keep one *time.Location per zone name.
	Zone *time.Location
}

// PerSecond returns a token-bucket Limit of n requests per second, burst n.
func PerSecond(n int) Limit { return Limit{Rate: n, Period: time.Second} }

// PerMinute returns a token-bucket Limit of n requests per minute, burst n.
func PerMinute(n int) Limit { return Limit{Rate: n, Period: time.Minute} }

// PerHour returns a token-bucket Limit of n requests per hour, burst n.
func PerHour(n int) Limit { return Limit{Rate: n, Period: time.Hour} }

// WithBurst returns a copy of l whose token bucket holds up to burst tokens.
func (l Limit) WithBurst(burst int) Limit { l.Burst = burst; return l }

// WithAlgorithm returns a copy of l that counts with algorithm a.
func (l Limit) WithAlgorithm(a Algorithm) Limit { l.Algorithm = a; return l }

// Validate reports whether l can be enforced: Rate positive and at most
// [MaxRate], Burst from 0 to MaxRate, Period from [MinPeriod] to
// [MaxPeriod], a token bucket that fills within MaxPeriod, a known
// Algorithm, and for [SlidingLog] a Rate of at most [MaxSlidingLogRate].
// Its errors wrap [ErrInvalidLimit].
func (l Limit) Validate() error {
	switch {
	case l.Rate <= 0:
		return fmt.Errorf("%w: rate %d must be positive", ErrInvalidLimit, l.Rate)
	case l.Rate > MaxRate:
		return fmt.Errorf("%w: rate %d is above %d", ErrInvalidLimit, l.Rate, MaxRate)
	case l.Period <= 0:
		return fmt.Errorf("%w: period %v must be positive", ErrInvalidLimit, l.Period)
	case l.Period < MinPeriod:
		return fmt.Errorf("%w: period %v is shorter than %v", ErrInvalidLimit, l.Period, MinPeriod)
	case l.Period > MaxPeriod:
		return fmt.Errorf("%w: period %v is longer than %v", ErrInvalidLimit, l.Period, MaxPeriod)
	case l.Burst < 0:
		return fmt.Errorf("%w: burst %d must not be negative", ErrInvalidLimit, l.Burst)
	case l.Burst > MaxRate:
		return fmt.Errorf("%w: burst %d is above %d", ErrInvalidLimit, l.Burst, MaxRate)
	case l.Algorithm == TokenBucket && l.fillTime() > MaxPeriod:
		return fmt.Errorf("%w: the bucket takes %v to fill, longer than %v", ErrInvalidLimit, l.fillTime(), MaxPeriod)
	case l.Algorithm < TokenBucket || l.Algorithm > SlidingLog:
		return fmt.Errorf("%w: unknown algorithm %d", ErrInvalidLimit, int(l.Algorithm))
	case l.Algorithm == SlidingLog && l.Rate > MaxSlidingLogRate:
		return fmt.Errorf("%w: sliding log rate %d is above %d", ErrInvalidLimit, l.Rate, MaxSlidingLogRate)
	}
	return l.validateCalendar()
}

// fillTime is how long a token bucket takes to fill from empty,
// Capacity·Period/Rate, saturating instead of overflowing.
func (l Limit) fillTime() time.Duration {
	d := float64(l.Capacity()) / float64(l.Rate) * float64(l.Period)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// rounding says which way [Limit.refillTime] rounds to the nanosecond.
type rounding bool

const (
	roundDown rounding = false // never later than the true instant
	roundUp   rounding = true  // never earlier than the true instant
)

// refillTime is how long l's token bucket takes to refill k tokens,
// k / (Rate / Period), rounded to the nanosecond as r says. Every wait in
// tokens (headers, deny cache, fallback, AllowAll's reports) goes through
// it.
func (l Limit) refillTime(k int, r rounding) time.Duration {
	d := float64(k) / l.PerSecondRate() * float64(time.Second)
	if r == roundUp {
		d = math.Ceil(d)
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// untilItHolds is how long after res, the budget a decision left, the
// budget holds n again: none while it does; for a token bucket, the time
// to full less the time its last capacity − n tokens take (never sooner
// than the true instant); for the windows, whose Result says less, the
// time until full, which is never sooner. A blocked request's wait after
// what it spent (block.go) and a take's wait from a report (allowall.go)
// are it.
func untilItHolds(res Result, n int) time.Duration {
	if res.Remaining >= n {
		return 0
	}
	if l := res.Limit; l.Algorithm == TokenBucket {
		return max(res.ResetAfter-l.refillTime(max(l.Capacity()-n, 0), roundDown), 0)
	}
	return res.ResetAfter
}

// Capacity returns the most tokens a key can ever hold under l: Burst (or
// Rate when Burst is 0) for a token bucket, Rate for the window algorithms.
// A request that costs more can never pass.
func (l Limit) Capacity() int {
	if l.Algorithm == TokenBucket && l.Burst > 0 {
		return l.Burst
	}
	return l.Rate
}

// PerSecondRate returns the token bucket's refill rate in tokens per second,
// Rate / Period.Seconds().
func (l Limit) PerSecondRate() float64 { return float64(l.Rate) / l.Period.Seconds() }

// String describes l, such as "100 per 1m" or "10 per 1s, burst 20" or
// "5 per 1h (sliding log)", or for a calendar quota "1000 per day (Europe/Berlin)".
func (l Limit) String() string {
	if l.Calendar != NoCalendar {
		return strconv.Itoa(l.Rate) + " per " + l.Calendar.String() + " (" + l.zoneName() + ")"
	}
	s := strconv.Itoa(l.Rate) + " per " + formatPeriod(l.Period)
	if l.Algorithm == TokenBucket && l.Burst > 0 && l.Burst != l.Rate {
		s += ", burst " + strconv.Itoa(l.Burst)
	}
	if l.Algorithm != TokenBucket {
		s += " (" + l.Algorithm.String() + ")"
	}
	return s
}

// formatPeriod writes d like time.Duration.String but without zero units:
// "1m", "1h", "1h30m", "1.5s".
func formatPeriod(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Result is a Store's decision for one request.
type Result struct {
	// Allowed reports whether the request took its tokens.
	Allowed bool
	// Limit is the limit the decision was made under.
	Limit Limit
	// Remaining is how many more requests of cost 1 would pass right now,
	// after this decision: with 5 tokens left and a request of cost 2
	// allowed, Remaining is 3. Never negative. On a token bucket it is the
	// whole tokens left, as golang.org/x/time/rate's TokensAt gives them;
	// a request for which a fraction of a token is missing still passes
	// where x/time/rate's wait for it rounds down to 0 ns (a bucket 10^-7
	// of a token short at 1,000 a second; at a billion a second or more,
	// every request the next nanosecond refills), so more may pass than
	// Remaining says, never fewer.
	Remaining int
	// RetryAfter is, when the request was denied, the shortest wait after
	// which the same request would pass, such as 100ms for a token bucket
	// of 10 per second that is one token short. 0 when allowed (but for
	// a limiter's dry run, which reports a denial Allowed with its wait).
	RetryAfter time.Duration
	// ResetAfter is the time until the key is back to its full budget, as
	// if it had never been seen; 0 when it is full.
	ResetAfter time.Duration
}

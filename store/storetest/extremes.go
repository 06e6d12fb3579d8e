package storetest

import (
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// extremeLimits decides limits at the bounds of Limit.Validate: every
// store must decide them like any other, with Remaining within [0,
// capacity] and durations that neither wrap nor go negative.
func extremeLimits(e *env) {
	const year = 365 * 24 * time.Hour
	tests := []struct {
		limit ratelimit.Limit
		retry time.Duration // the wait for one more after spending all; 0: not checked
		reset time.Duration // the time to full after spending all; 0: not checked
	}{
		{ratelimit.Limit{Rate: 1, Period: ratelimit.MaxPeriod, Algorithm: ratelimit.TokenBucket}, ratelimit.MaxPeriod, ratelimit.MaxPeriod},
		{ratelimit.PerHour(1).WithBurst(876_000), time.Hour, 876_000 * time.Hour}, // 99.93 years to fill
		{ratelimit.Limit{Rate: ratelimit.MaxRate, Period: ratelimit.MaxPeriod}, 0, ratelimit.MaxPeriod},
		{ratelimit.Limit{Rate: 1, Period: ratelimit.MaxPeriod, Algorithm: ratelimit.FixedWindow}, 0, 0},
		{ratelimit.Limit{Rate: ratelimit.MaxRate, Period: ratelimit.MaxPeriod, Algorithm: ratelimit.SlidingWindow}, 0, 0},
		{ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate, Period: ratelimit.MaxPeriod, Algorithm: ratelimit.SlidingLog}, ratelimit.MaxPeriod, ratelimit.MaxPeriod},
		{ratelimit.Limit{Rate: 3, Period: ratelimit.MinPeriod, Algorithm: ratelimit.FixedWindow}, 0, 0},
		{ratelimit.Limit{Rate: 3, Period: ratelimit.MinPeriod, Algorithm: ratelimit.SlidingWindow}, 0, 0},
		{ratelimit.Limit{Rate: 3, Period: ratelimit.MinPeriod, Algorithm: ratelimit.SlidingLog}, ratelimit.MinPeriod, ratelimit.MinPeriod},
		{ratelimit.Limit{Rate: 3, Period: ratelimit.MinPeriod}, ratelimit.MinPeriod / 3, ratelimit.MinPeriod},
		// rates per second that print with an exponent (1e+06, 1e-05),
		// which some Lua engines do not read as numbers
		{ratelimit.PerSecond(1_000_000), 0, time.Second},
		{ratelimit.Limit{Rate: 1000, Period: time.Millisecond, Algorithm: ratelimit.FixedWindow}, 0, 0},
		{ratelimit.Limit{Rate: 1, Period: 100_000 * time.Second}, 100_000 * time.Second, 100_000 * time.Second},
	}
	for i, tt := range tests {
		key := fmt.Sprint("extreme-", i)
		l, c := tt.limit, tt.limit.Capacity()
		check := func(what string, res ratelimit.Result) {
			e.t.Helper()
			if res.Remaining < 0 || res.Remaining > c || res.RetryAfter < 0 || res.ResetAfter < 0 ||
				res.RetryAfter > 2*ratelimit.MaxPeriod || res.ResetAfter > 2*ratelimit.MaxPeriod+time.Second ||
				res.Allowed != (res.RetryAfter == 0) {
				e.t.Fatalf("%v, %s: %+v; want Remaining in [0, %d], durations in [0, 2·MaxPeriod]", l, what, res, c)
			}
		}
		res := e.allow(key, l, c)
		check("spending the whole capacity", res)
		if !res.Allowed || res.Remaining != 0 {
			e.t.Fatalf("%v: spending the whole capacity of a new key: %+v, want allowed with 0 left", l, res)
		}
		if tt.reset > 0 {
			near(e.t, fmt.Sprintf("%v: ResetAfter when spent", l), res.ResetAfter, tt.reset)
		}
		res = e.allow(key, l, 1)
		check("one more", res)
		if tt.retry > 0 && tt.retry >= time.Millisecond {
			if res.Allowed {
				e.t.Fatalf("%v: one more after spending all was allowed", l)
			}
			near(e.t, fmt.Sprintf("%v: RetryAfter when spent", l), res.RetryAfter, tt.retry)
		}
		e.wait(year)
		check("a year later", e.allow(key, l, 0))
	}
}

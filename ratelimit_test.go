package ratelimit_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

func TestLimitValidate(t *testing.T) {
	tests := []struct {
		limit ratelimit.Limit
		valid bool
	}{
		{ratelimit.PerSecond(1), true},
		{ratelimit.PerHour(5).WithBurst(100), true},
		{ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate, Period: time.Second, Algorithm: ratelimit.SlidingLog}, true},
		{ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate + 1, Period: time.Second, Algorithm: ratelimit.SlidingLog}, false},
		{ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate + 1, Period: time.Second, Algorithm: ratelimit.SlidingWindow}, true},
		{ratelimit.Limit{}, false},
		{ratelimit.Limit{Rate: 1}, false},
		{ratelimit.Limit{Period: time.Second}, false},
		{ratelimit.PerSecond(1).WithBurst(-1), false},
		{ratelimit.PerSecond(1).WithAlgorithm(4), false},
		{ratelimit.PerSecond(1).WithAlgorithm(-1), false},
		{ratelimit.Limit{Rate: 1, Period: 500 * time.Nanosecond}, false},
		{ratelimit.Limit{Rate: 1, Period: 999 * time.Microsecond}, false},
		{ratelimit.Limit{Rate: 1, Period: ratelimit.MinPeriod}, true},
		{ratelimit.Limit{Rate: 1, Period: ratelimit.MaxPeriod, Algorithm: ratelimit.FixedWindow}, true},
		{ratelimit.Limit{Rate: 1, Period: ratelimit.MaxPeriod + 1, Algorithm: ratelimit.FixedWindow}, false},
		{ratelimit.Limit{Rate: ratelimit.MaxRate, Period: time.Second}, true},
		{ratelimit.Limit{Rate: ratelimit.MaxRate + 1, Period: time.Second}, false},
		{ratelimit.Limit{Rate: math.MaxInt, Period: time.Second}, false},
		{ratelimit.PerSecond(1).WithBurst(ratelimit.MaxRate + 1), false},
		{ratelimit.PerSecond(1).WithBurst(math.MaxInt), false},
		// {Rate 1, Period 1h, Burst 3e6} takes 342 years to fill.
		{ratelimit.PerHour(1).WithBurst(3_000_000), false},
		{ratelimit.PerHour(1).WithBurst(876_000), true},                                        // 99.93 years
		{ratelimit.PerHour(1).WithBurst(876_001).WithAlgorithm(ratelimit.SlidingWindow), true}, // burst ignored
	}
	for _, tt := range tests {
		err := tt.limit.Validate()
		if (err == nil) != tt.valid || (err != nil && !errors.Is(err, ratelimit.ErrInvalidLimit)) {
			t.Errorf("%+v.Validate() = %v, want valid %v (errors wrap ErrInvalidLimit)", tt.limit, err, tt.valid)
		}
	}
}

func TestLimitString(t *testing.T) {
	tests := []struct {
		limit ratelimit.Limit
		want  string
	}{
		{ratelimit.PerSecond(10), "10 per 1s"},
		{ratelimit.PerMinute(100), "100 per 1m"},
		{ratelimit.PerHour(5), "5 per 1h"},
		{ratelimit.PerSecond(10).WithBurst(10), "10 per 1s"},
		{ratelimit.PerSecond(10).WithBurst(20), "10 per 1s, burst 20"},
		{ratelimit.Limit{Rate: 3, Period: 1500 * time.Millisecond, Algorithm: ratelimit.FixedWindow}, "3 per 1.5s (fixed window)"},
		{ratelimit.Limit{Rate: 3, Period: 90 * time.Minute, Algorithm: ratelimit.SlidingWindow}, "3 per 1h30m (sliding window)"},
		{ratelimit.PerSecond(1).WithAlgorithm(7), "1 per 1s (Algorithm(7))"},
	}
	for _, tt := range tests {
		if got := tt.limit.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

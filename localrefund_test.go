package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestLocalStoreRefundN: the fallback store gives back what Refunder
// allows, erring towards less: a bucket's tokens up to its capacity, a
// window's count for a take surely in the current window, nothing for a
// take that may be of the window before, nothing on a sliding log.
func TestLocalStoreRefundN(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC) // 30 s into a minute
	for _, tt := range []struct {
		name  string
		limit ratelimit.Limit
		age   time.Duration
		want  int // Remaining after 3 taken and 2 given back
	}{
		{"token bucket", ratelimit.PerHour(5), time.Second, 4},
		{"fixed window, this window", ratelimit.PerMinute(5).WithAlgorithm(ratelimit.FixedWindow), 10 * time.Second, 4},
		{"fixed window, maybe the one before", ratelimit.PerMinute(5).WithAlgorithm(ratelimit.FixedWindow), 40 * time.Second, 2},
		{"sliding window, this window", ratelimit.PerMinute(5).WithAlgorithm(ratelimit.SlidingWindow), 10 * time.Second, 4},
		{"sliding log", ratelimit.PerMinute(5).WithAlgorithm(ratelimit.SlidingLog), time.Second, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := ratelimit.NewLocalStore(100, func() time.Time { return start })
			ctx := context.Background()
			if _, err := s.AllowN(ctx, "k", tt.limit, 3); err != nil {
				t.Fatal(err)
			}
			if _, err := s.(ratelimit.Refunder).RefundN(ctx, "k", tt.limit, 2, tt.age); err != nil {
				t.Fatal(err)
			}
			res, err := s.AllowN(ctx, "k", tt.limit, 0)
			if err != nil || res.Remaining != tt.want {
				t.Fatalf("after 3 taken, 2 given back: %+v, %v; want remaining %d", res, err, tt.want)
			}
			if _, err := s.(ratelimit.Refunder).RefundN(ctx, "k", tt.limit, 5, tt.age); err != nil {
				t.Fatal(err)
			}
			if res, _ := s.AllowN(ctx, "k", tt.limit, 0); res.Remaining > 5 {
				t.Fatalf("a refund above what was taken: remaining %d of 5", res.Remaining)
			}
		})
	}
}

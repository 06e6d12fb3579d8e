package storetest

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
)

// differential replays random timelines on store and on a
// golang.org/x/time/rate Limiter, and fails on the first decision or
// Remaining that differs, or a RetryAfter or ResetAfter more than 1 ms off.
// Each timeline has its own random limit and key; gaps between calls are
// log-uniform from 1 µs to four refills of one token, costs uniform in
// 0..capacity. It returns the number of decisions compared.
func differential(t *testing.T, store ratelimit.Store, set func(time.Time), start time.Time, timelines, steps int) int {
	t.Helper()
	rng := newRand(t)
	now, compared := start, 0
	for i := range timelines {
		l := ratelimit.Limit{
			Rate:   1 + rng.IntN(100),
			Period: periods[rng.IntN(len(periods))],
			Burst:  rng.IntN(21),
		}
		capacity := l.Capacity()
		perSecond := l.PerSecondRate()
		ref := rate.NewLimiter(rate.Limit(perSecond), capacity)
		key := "differential-" + strconv.Itoa(i)
		oneToken := time.Duration(float64(time.Second) / perSecond)
		for step := range steps {
			now = now.Add(logUniform(rng, time.Microsecond, 4*oneToken).Truncate(time.Microsecond))
			set(now)
			n := rng.IntN(capacity + 1)
			before := ref.TokensAt(now)
			got, err := store.AllowN(context.Background(), key, l, n)
			if err != nil {
				t.Fatalf("timeline %d step %d: AllowN(%v, %d): %v", i, step, l, n, err)
			}
			want := n == 0 || ref.AllowN(now, n)
			after := ref.TokensAt(now)
			wantRemaining := 0
			if after >= 1 {
				wantRemaining = int(after)
			}
			if got.Allowed != want || got.Remaining != wantRemaining {
				t.Fatalf("timeline %d step %d (limit %v, n %d, %.9f tokens): allowed %v remaining %d, x/time/rate: allowed %v remaining %d",
					i, step, l, n, before, got.Allowed, got.Remaining, want, wantRemaining)
			}
			wantRetry := time.Duration(0)
			if !want {
				wantRetry = secondsToDuration((float64(n) - before) / perSecond)
			}
			wantReset := secondsToDuration((float64(capacity) - after) / perSecond)
			if !within(got.RetryAfter, wantRetry, time.Millisecond) || !within(got.ResetAfter, wantReset, time.Millisecond) {
				t.Fatalf("timeline %d step %d (limit %v, n %d): RetryAfter %v ResetAfter %v, want %v and %v (±1ms)",
					i, step, l, n, got.RetryAfter, got.ResetAfter, wantRetry, wantReset)
			}
			compared++
		}
	}
	return compared
}

// periods are the periods the random timelines draw from.
var periods = []time.Duration{250 * time.Millisecond, time.Second, 1500 * time.Millisecond, time.Minute}

// newRand returns a random source seeded from the clock, and logs the seed.
func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>32))
}

func logUniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	x := math.Log(float64(lo)) + rng.Float64()*(math.Log(float64(hi))-math.Log(float64(lo)))
	return time.Duration(math.Exp(x))
}

func secondsToDuration(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

func within(got, want, tolerance time.Duration) bool {
	d := got - want
	return d >= -tolerance && d <= tolerance
}

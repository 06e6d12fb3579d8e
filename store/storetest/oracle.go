package storetest

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// admitted is one admitted request of a model's history.
type admitted struct {
	at time.Time
	n  int
}

// windowModel decides as algorithm a must, by brute force over the history
// of admitted requests.
type windowModel struct {
	l       ratelimit.Limit
	history []admitted
}

// tokensIn sums the tokens admitted in [from, to) (or (from, to] when
// trailing is set).
func (m *windowModel) tokensIn(from, to time.Time, trailing bool) int {
	sum := 0
	for _, h := range m.history {
		in := !h.at.Before(from) && h.at.Before(to)
		if trailing {
			in = h.at.After(from) && !h.at.After(to)
		}
		if in {
			sum += h.n
		}
	}
	return sum
}

func alignedStart(t time.Time, p time.Duration) time.Time {
	ns := t.UnixNano()
	return time.Unix(0, ns-ns%int64(p))
}

// decide returns the model's decision and Remaining for n at now, and
// records it if it is admitted.
func (m *windowModel) decide(now time.Time, n int) (bool, int) {
	p, rate := m.l.Period, m.l.Rate
	var ok bool
	var remaining func() int
	switch m.l.Algorithm {
	case ratelimit.FixedWindow:
		start := alignedStart(now, p)
		curr := m.tokensIn(start, start.Add(p), false)
		ok = curr+n <= rate
		remaining = func() int { return rate - m.tokensIn(start, start.Add(p), false) }
	case ratelimit.SlidingWindow:
		start := alignedStart(now, p)
		prev := float64(m.tokensIn(start.Add(-p), start, false))
		weight := 1 - float64(now.Sub(start))/float64(p)
		estimate := func() float64 { return prev*weight + float64(m.tokensIn(start, start.Add(p), false)) }
		ok = estimate()+float64(n) <= float64(rate)
		remaining = func() int { return max(0, int(math.Floor(float64(rate)-estimate()))) }
	case ratelimit.SlidingLog:
		in := m.tokensIn(now.Add(-p), now, true)
		ok = in+n <= rate
		remaining = func() int { return rate - m.tokensIn(now.Add(-p), now, true) }
	}
	if ok && n > 0 {
		m.history = append(m.history, admitted{now, n})
	}
	return ok, remaining()
}

// worstTrailing is the most tokens admitted within any trailing period.
func (m *windowModel) worstTrailing() int {
	worst := 0
	for _, h := range m.history {
		worst = max(worst, m.tokensIn(h.at.Add(-m.l.Period), h.at, true))
	}
	return worst
}

// windowOracle replays random timelines of algorithm a on store and on
// windowModel, and fails on the first decision or Remaining that differs.
// For SlidingLog it also checks that no trailing period ever held more than
// Rate, and that a denied request passes once its RetryAfter has passed.
// It returns the number of decisions compared.
func windowOracle(t *testing.T, store ratelimit.Store, set func(time.Time), start time.Time, a ratelimit.Algorithm, timelines, steps int) int {
	t.Helper()
	rng := newRand(t)
	now, compared := start, 0
	for i := range timelines {
		l := ratelimit.Limit{Rate: 1 + rng.IntN(30), Period: periods[rng.IntN(len(periods))], Algorithm: a}
		m := &windowModel{l: l}
		key := "oracle-" + strconv.Itoa(i)
		perRequest := l.Period / time.Duration(l.Rate)
		for step := range steps {
			now = now.Add(logUniform(rng, time.Microsecond, 3*perRequest).Truncate(time.Microsecond))
			set(now)
			n := rng.IntN(l.Rate + 1)
			got, err := store.AllowN(context.Background(), key, l, n)
			if err != nil {
				t.Fatalf("timeline %d step %d: AllowN(%v, %d): %v", i, step, l, n, err)
			}
			want, wantRemaining := m.decide(now, n)
			if got.Allowed != want || got.Remaining != wantRemaining {
				t.Fatalf("timeline %d step %d (limit %v, n %d, at %v): allowed %v remaining %d, model: allowed %v remaining %d",
					i, step, l, n, now.Sub(start), got.Allowed, got.Remaining, want, wantRemaining)
			}
			if got.Allowed != (got.RetryAfter == 0) || got.ResetAfter < 0 || got.ResetAfter > 2*l.Period {
				t.Fatalf("timeline %d step %d: RetryAfter %v, ResetAfter %v out of range", i, step, got.RetryAfter, got.ResetAfter)
			}
			compared++
			if !got.Allowed && rng.IntN(4) == 0 {
				// Check RetryAfter: the same request passes then, not 1 ms before.
				if got.RetryAfter > time.Millisecond {
					early := now.Add(got.RetryAfter - time.Millisecond)
					set(early)
					if res, _ := store.AllowN(context.Background(), key, l, 0); res.Remaining >= n {
						t.Fatalf("timeline %d step %d: room for %d already 1ms before RetryAfter %v", i, step, n, got.RetryAfter)
					}
				}
				now = now.Add(got.RetryAfter)
				set(now)
				res, err := store.AllowN(context.Background(), key, l, n)
				want, _ := m.decide(now, n)
				if err != nil || !res.Allowed || !want {
					t.Fatalf("timeline %d step %d (limit %v): n %d after RetryAfter %v: store %v %v, model %v", i, step, l, n, got.RetryAfter, res.Allowed, err, want)
				}
				compared++
			}
		}
		if w := m.worstTrailing(); a == ratelimit.SlidingLog && w > l.Rate {
			t.Fatalf("timeline %d: %d tokens admitted within one trailing period, rate %d", i, w, l.Rate)
		}
	}
	return compared
}

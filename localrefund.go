package ratelimit

import (
	"context"
	"time"
)

// RefundN implements [Refunder] for the fallback store, so that a request
// it admitted and whose response does not count ([WithCountIf]) gives its
// cost back, here and in what the main store is owed (settle.go). It gives
// back what Refunder allows, erring towards less: a token bucket gains n
// tokens, up to its capacity; a window's current count drops by n, not
// below 0, if the take was surely in the current window (age no longer
// than the window has run); a sliding log gives nothing back.
func (s *localStore) RefundN(_ context.Context, key string, limit Limit, n int, age time.Duration) (Result, error) {
	if err := ValidateRefund(key, limit, n, age); err != nil {
		return Result{}, err
	}
	now := s.now().UnixNano()
	sh, h := s.shardOf(key, limit)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st, found := sh.m[h]
	if !found || st.exp <= now || n == 0 {
		return Result{Allowed: true, Limit: limit}, nil // nothing held: as if never taken
	}
	start, end := limit.Window(time.Unix(0, now))
	current := now-int64(age) >= start.UnixNano()
	switch limit.Algorithm {
	case FixedWindow:
		if current && st.at == end.UnixNano() {
			st.x = max(0, st.x-float64(n))
			st.used = st.x / float64(limit.Rate)
		}
	case SlidingWindow:
		if current && st.at == start.UnixNano()+int64(limit.Period) {
			st.x = max(0, st.x-float64(n))
		}
	case SlidingLog:
		// nothing given back: less, as Refunder allows
	default:
		st.tokenBucket(true, now, limit, -n) // n tokens back, up to the capacity
	}
	sh.m[h] = st
	return Result{Allowed: true, Limit: limit}, nil
}

package memory

import (
	"context"
	"math"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Reserver = (*Store)(nil)

// ReserveN implements [ratelimit.Reserver]: the bucket may go below zero
// tokens, by the tokens booked ahead, and refills from there, so that every
// later decision on the key, AllowN's too, waits behind the booking.
func (s *Store) ReserveN(ctx context.Context, key string, limit ratelimit.Limit, n int, maxWait time.Duration) (r ratelimit.Reservation, err error) {
	h := s.hash(key, ratelimit.TokenBucket)
	sh := &s.shards[h>>s.shift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.checked(key, limit, n) || maxWait < 0 || limit.Algorithm != ratelimit.TokenBucket {
		if err := ratelimit.ValidateReserve(key, limit, n, maxWait); err != nil {
			return ratelimit.Reservation{}, err
		}
		sh.last = lastLimit{limit: limit, capacity: limit.Capacity(), rate: limit.PerSecondRate(), keep: keepOf(limit)}
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Reservation{}, err
	}
	now := s.now()
	i, found := sh.cells.find(h)
	if found {
		sl := &sh.cells.slots[i]
		act := reserveTokens(&r, &sl.c, false, now, limit, sh.last.rate, float64(sh.last.capacity), n, maxWait)
		if r.Allowed {
			sl.k = sh.last.keep
			sh.setEvent(h, act, now)
		}
		return r, nil
	}
	var c cell
	act := reserveTokens(&r, &c, true, now, limit, sh.last.rate, float64(sh.last.capacity), n, maxWait)
	if r.Allowed && n > 0 {
		sh.put(i, false, h, c, sh.last.keep, now)
		sh.setEvent(h, act, now)
	}
	return r, nil
}

// reserveTokens is x/time/rate's reserveN on the bucket in c (fresh: none
// yet) at now: it books n tokens for the earliest instant, at most maxWait
// away, writes the booking to r and returns that instant in Unix ns, the
// bucket's last event. A booking not allowed leaves c as it was. rate and burst are
// l's, worked out by the caller.
func reserveTokens(r *ratelimit.Reservation, c *cell, fresh bool, now int64, l ratelimit.Limit, rate, burst float64, n int, maxWait time.Duration) int64 {
	tokens := advance(c, fresh, now, rate, burst)
	left := tokens - float64(n)
	wait := waitDuration(-left, rate)
	*r = ratelimit.Reservation{Result: ratelimit.Result{Limit: l}}
	if wait > maxWait {
		r.RetryAfter = max(ceilDuration(-left, rate)-maxWait, 1)
		r.Remaining = floorTokens(tokens)
		r.ResetAfter = ceilDuration(burst-tokens, rate)
		return 0
	}
	act := addSat(now, int64(wait))
	r.Allowed, r.Tokens, r.Delay, r.At = true, n, wait, time.Unix(0, act)
	r.Remaining = floorTokens(left)
	r.ResetAfter = ceilDuration(burst-left, rate)
	*c = cell{x: left, at: now, exp: addSat(now, addSat(int64(r.ResetAfter), int64(expiryMargin)))}
	return act
}

// advance is the bucket's tokens at now, refilled since its last update,
// as takeTokensAt and x/time/rate's advance compute them.
func advance(c *cell, fresh bool, now int64, rate, burst float64) float64 {
	tokens, last := c.x, c.at
	if fresh {
		tokens, last = burst, now
	}
	if now < last {
		last = now
	}
	elapsed := now - last
	if elapsed < 0 { // overflowed: an age beyond the int64 range
		elapsed = math.MaxInt64
	}
	tokens += time.Duration(elapsed).Seconds() * rate
	if tokens > burst {
		tokens = burst
	}
	return tokens
}

// waitDuration is x/time/rate's durationFromTokens: the time to refill
// missing tokens, truncated to the nanosecond; 0 for missing <= 0.
func waitDuration(missing, rate float64) time.Duration {
	if missing <= 0 {
		return 0
	}
	d := float64(time.Second) * (missing / rate)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// CancelReservation implements [ratelimit.Reserver], as x/time/rate's
// Reservation.CancelAt at the store's now.
func (s *Store) CancelReservation(ctx context.Context, key string, limit ratelimit.Limit, r ratelimit.Reservation) error {
	if err := ratelimit.ValidateReserve(key, limit, r.Tokens, 0); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !r.Allowed || r.Tokens == 0 {
		return nil
	}
	h := s.hash(key, ratelimit.TokenBucket)
	sh := &s.shards[h>>s.shift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.now()
	i, found := sh.cells.find(h)
	if !found {
		return nil // full again: there is nothing to give back
	}
	sl := &sh.cells.slots[i]
	// The last event is the latest booking's instant, or the last update:
	// an allowed AllowN books at its own instant.
	ev := max(sh.events[h], sl.c.at)
	act := r.At.UnixNano()
	if ev, ok := cancelTokens(&sl.c, ev, now, limit, r.Tokens, act); ok {
		sh.setEvent(h, ev, now)
	}
	return nil
}

// cancelTokens is x/time/rate's CancelAt of a booking of n tokens at act
// on the bucket in c, whose last event is ev, at now. It reports the
// bucket's last event after it, and whether it changed the bucket.
func cancelTokens(c *cell, ev, now int64, l ratelimit.Limit, n int, act int64) (int64, bool) {
	if act < now {
		return ev, false
	}
	rate, burst := l.PerSecondRate(), float64(l.Capacity())
	restore := float64(n) - time.Duration(ev-act).Seconds()*rate
	if restore <= 0 {
		return ev, false
	}
	tokens := min(advance(c, false, now, rate, burst)+restore, burst)
	reset := ceilDuration(burst-tokens, rate)
	*c = cell{x: tokens, at: now, exp: addSat(now, addSat(int64(reset), int64(expiryMargin)))}
	if act == ev {
		if prev := act - int64(waitDuration(float64(n), rate)); prev >= now {
			ev = prev
		}
	}
	return ev, true
}

// setEvent keeps ev, the last event of the bucket h, while it is ahead of
// now: only a booking ahead needs it, to be cancelled.
func (sh *shard) setEvent(h uint64, ev, now int64) {
	if ev <= now {
		if len(sh.events) > 0 {
			delete(sh.events, h)
		}
		return
	}
	if sh.events == nil {
		sh.events = make(map[uint64]int64)
	}
	sh.events[h] = ev
}

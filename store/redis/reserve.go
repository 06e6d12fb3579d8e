package redisstore

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Reserver = (*Store)(nil)

// ReserveN implements [ratelimit.Reserver] in at most one round trip, as
// [Store.AllowN]: alone (reserve.lua), or in a batch with the decisions
// waiting for the same node, sent at most once, with AllowN's deadline.
// The booking is in the key's value, so every instance's later decisions
// wait behind it. Its clock is Redis's (or the app's, with [WithAppClock]),
// in microseconds; delays and instants are to the nanosecond, as
// x/time/rate's.
func (s *Store) ReserveN(ctx context.Context, key string, limit ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	if err := ratelimit.ValidateReserve(key, limit, n, maxWait); err != nil {
		return ratelimit.Reservation{}, err
	}
	if s.client == nil {
		return ratelimit.Reservation{}, ErrNilClient
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Reservation{}, err
	}
	p, b := s.pend(ctx, key, limit, n)
	p.op, p.maxWait = book, maxWait
	var r ratelimit.Reservation
	_, err := s.decide(b, p)
	if err == nil {
		r = p.reservation()
	}
	p.free()
	return r, err
}

// reservation is the outcome of p, decided without error, as a booking's:
// a take's and a cancellation's are their Result only.
func (p *pending) reservation() ratelimit.Reservation {
	r := ratelimit.Reservation{Result: p.res}
	if p.op == book && r.Allowed {
		r.Tokens, r.Delay, r.At = p.n, p.delay, time.UnixMicro(p.now).Add(p.delay)
	}
	return r
}

// CancelReservation implements [ratelimit.Reserver] in at most one round
// trip, alone or in a batch, as [Store.ReserveN].
func (s *Store) CancelReservation(ctx context.Context, key string, limit ratelimit.Limit, r ratelimit.Reservation) error {
	if err := ratelimit.ValidateReserve(key, limit, r.Tokens, 0); err != nil {
		return err
	}
	if !r.Allowed || r.Tokens == 0 {
		return ctx.Err()
	}
	if s.client == nil {
		return ErrNilClient
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p, b := s.pend(ctx, key, limit, r.Tokens)
	p.op, p.at = unbook, r.At.UnixNano()
	_, err := s.decide(b, p)
	p.free()
	return err
}

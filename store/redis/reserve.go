package redis

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Reserver = (*Store)(nil)

// ReserveN implements [ratelimit.Reserver] in one script call (reserve.lua,
// sent at most once, with the deadline of [Store.AllowN]): the booking is
// in the key's value, so every instance's later decisions wait behind it.
// Its clock is Redis's (or the app's, with [WithAppClock]), in microseconds;
// delays and instants are to the nanosecond, as x/time/rate's.
func (s *Store) ReserveN(ctx context.Context, key string, limit ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	if err := ratelimit.ValidateReserve(key, limit, n, maxWait); err != nil {
		return ratelimit.Reservation{}, err
	}
	rows, err := s.reserveCall(ctx, key, limit, "r", n, int64(maxWait), 0)
	if err != nil {
		return ratelimit.Reservation{}, err
	}
	r := ratelimit.Reservation{Result: rows[0].result(limit)}
	if r.Allowed {
		r.Tokens = n
		r.Delay = time.Duration(rows[1][1])
		r.At = time.UnixMicro(rows[1][2]).Add(r.Delay)
	}
	return r, nil
}

// CancelReservation implements [ratelimit.Reserver] in one script call.
func (s *Store) CancelReservation(ctx context.Context, key string, limit ratelimit.Limit, r ratelimit.Reservation) error {
	if err := ratelimit.ValidateReserve(key, limit, r.Tokens, 0); err != nil {
		return err
	}
	if !r.Allowed || r.Tokens == 0 {
		return ctx.Err()
	}
	at := r.At.UnixNano()
	_, err := s.reserveCall(ctx, key, limit, "c", r.Tokens, at/1000, at%1000)
	return err
}

// reserveCall runs reserve.lua in mode ("r" to book, "c" to cancel) and
// returns its two rows.
func (s *Store) reserveCall(ctx context.Context, key string, limit ratelimit.Limit, mode string, n int, x, y int64) ([2]row, error) {
	var rows [2]row
	if s.client == nil {
		return rows, ErrNilClient
	}
	if err := ctx.Err(); err != nil {
		return rows, err
	}
	a := s.limitArgs(limit)
	sc := s.scripts.reserve
	args := []any{"evalsha", sc.script.Hash(), 1, s.Key(key, ratelimit.TokenBucket),
		s.clockArg(), s.deadlineArg(ctx), mode, a[0], a[1], n, x, y}
	if err := s.eval(ctx, sc, args, rows[:]); err != nil {
		return rows, err
	}
	if rows[0][0] < 0 {
		return rows, ErrLate
	}
	return rows, nil
}

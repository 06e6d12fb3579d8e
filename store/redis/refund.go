package redisstore

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Refunder = (*Store)(nil)

// RefundN implements [ratelimit.Refunder] in one script call (refund.lua)
// on the key's one Redis key, by the rules of each algorithm that
// [ratelimit.Refunder] states, with the clock the store's takes use
// (Redis TIME, or the app's with [WithAppClock]). It is sent at most once,
// with the deadline of ctx as a take's (past it, nothing is given back
// and the error wraps [ErrLate]), and alone, never in a batch. The script
// reads its clock after the trip to Redis, which age does not cover: a
// caller that needs the bound exact near a window's edge adds the trip to
// age (a larger age only ever gives back less).
//
// A refund on a sliding log rewrites the running totals of the entries
// after the ones it gives back: at most the log's entries within age.
func (s *Store) RefundN(ctx context.Context, key string, limit ratelimit.Limit, n int, age time.Duration) (ratelimit.Result, error) {
	if err := ratelimit.ValidateRefund(key, limit, n, age); err != nil {
		return ratelimit.Result{}, err
	}
	if s.client == nil {
		return ratelimit.Result{}, ErrNilClient
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	res, err := s.refund(ctx, key, limit, n, age)
	if err == errMissedWindow { // nothing was written: once more, around Redis's clock
		res, err = s.refund(ctx, key, limit, n, age)
	}
	return res, err
}

// refund sends one refund and reads its reply.
func (s *Store) refund(ctx context.Context, key string, limit ratelimit.Limit, n int, age time.Duration) (ratelimit.Result, error) {
	sc, args := s.refundArgs(ctx, key, limit, n, age)
	var rows [1]row
	if _, err := s.eval(ctx, s.client, sc, args, rows[:]); err != nil {
		return ratelimit.Result{}, err
	}
	switch r := rows[0]; {
	case r[0] == missed:
		return ratelimit.Result{}, errMissedWindow
	case r[0] < 0:
		return ratelimit.Result{}, ErrLate
	default:
		return r.result(limit), nil
	}
}

// ceilMicros is d in whole µs, rounded up (saturated): a refund's age is
// never shortened, which could give back more than the take.
func ceilMicros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if d%time.Microsecond != 0 {
		us++
	}
	return us
}

package ratelimit

// Reservations: a token bucket's decision that can book the future, as a
// store capability beside Store (Reserver), with the checks every store
// makes (ValidateReserve).

import (
	"context"
	"fmt"
	"time"
)

// Reservation is a store's booking of tokens of one key's token bucket, the
// answer of [Reserver.ReserveN]. It follows golang.org/x/time/rate's
// Reservation: the tokens are taken now, and are the caller's after Delay.
type Reservation struct {
	// Result is the decision as [Store.AllowN] reports one: Allowed is
	// whether the tokens are booked; Remaining and ResetAfter describe the
	// bucket after the booking; RetryAfter is, when not booked, how much
	// longer than the bound the wait would have been.
	Result
	// Tokens is the number of tokens booked; 0 when not booked.
	Tokens int
	// Delay is how long after the decision the tokens are the caller's:
	// 0 when they are there now. The caller acts after Delay.
	Delay time.Duration
	// At is the instant, in the store's clock, at which the tokens are the
	// caller's (the decision's instant plus Delay). It identifies the
	// booking to [Reserver.CancelReservation].
	At time.Time
}

// Reserver is implemented by stores whose token buckets can book the
// future: the memory store under its lock, the Redis store in one script
// call, so that every instance sees the booking.
//
// Other stores get the fallback of [Limiter.WaitN]: a take now, and after a
// denial another after its RetryAfter, until one passes or the context
// ends. That keeps to the budget but books nothing: waiters are not served
// in order, and nothing is given back on cancellation.
type Reserver interface {
	Store
	// ReserveN takes n tokens of key's token bucket under limit now, and
	// books them for the earliest instant at which the bucket holds them,
	// if that instant is at most maxWait away, as x/time/rate's
	// Limiter.ReserveN does with maxFutureReserve = maxWait. Otherwise it
	// takes nothing and the Reservation's Allowed is false. A store's
	// booking is seen by every later decision on the key, AllowN's too.
	//
	// Arguments are checked as by [ValidateReserve].
	ReserveN(ctx context.Context, key string, limit Limit, n int, maxWait time.Duration) (Reservation, error)
	// CancelReservation gives back the tokens of r, a booking of key under
	// limit, that no later booking depends on, as x/time/rate's
	// Reservation.CancelAt does at the store's now: nothing once r's
	// instant has passed, or for r not booked. Cancel a booking once: as
	// with CancelAt, the store keeps no record of cancelled bookings, and
	// cancelling r again gives its tokens back again (the limiter's own
	// callers, Wait and Transport, cancel each booking at most once).
	CancelReservation(ctx context.Context, key string, limit Limit, r Reservation) error
}

// ValidateReserve checks the arguments of [Reserver.ReserveN]: those of
// [ValidateCall], a [TokenBucket] limit and a maxWait that is not negative.
func ValidateReserve(key string, limit Limit, n int, maxWait time.Duration) error {
	if err := ValidateCall(key, limit, n); err != nil {
		return err
	}
	if limit.Algorithm != TokenBucket {
		return fmt.Errorf("%w: %v", ErrNotTokenBucket, limit)
	}
	if maxWait < 0 {
		return fmt.Errorf("%w: %v", ErrInvalidWait, maxWait)
	}
	return nil
}

package ratelimit

// Refunds: giving back what a take took, as a store capability beside
// Store (Refunder), with the checks every store makes (ValidateRefund).
// The Limiter reserves a request's cost before its handler and settles
// after it (WithCountIf, Charge, a cancelled Wait): a refund is how it
// gives back what the request did not use.

import (
	"context"
	"fmt"
	"time"
)

// Refunder is implemented by stores that can give back tokens that a take
// of theirs took: store/memory under its lock, store/redis in one script
// call.
type Refunder interface {
	Store
	// RefundN gives back n tokens of key's budget under limit, taken by a
	// take (AllowN, AllowAll or ReserveN) of the same key and limit that the
	// store decided at most age ago. age is measured by the caller from
	// before it sent the take, with room for the time until the store reads
	// its clock for the refund, so that the take is known to be no older:
	// an age too long gives back less, never more. A refund is what the
	// budget would be had the take never been made, or less, never more:
	//   - TokenBucket: the bucket gains n tokens, up to its capacity (a
	//     bucket below empty, by bookings, climbs back by n).
	//   - FixedWindow and calendar windows: the count drops by n (not
	//     below 0) if the take was surely in the current window, that is
	//     if now-age is in it; otherwise nothing is given back, since the
	//     count may be another window's.
	//   - SlidingWindow: the current window's count drops by n if now-age
	//     is in it; if now-age is in the previous window, the previous
	//     window's count drops by n (the smaller gift when unsure which
	//     window holds the take); older, nothing.
	//   - SlidingLog: up to n entries no older than age are removed, the
	//     oldest of them first, if age is less than the period; older,
	//     nothing (the take's own entry may have left the window, and
	//     another's is not its to give back).
	// It returns the budget after the refund as a report (n = 0) would,
	// but always Allowed and with no RetryAfter (a bucket still below
	// empty reports Remaining 0): Remaining, ResetAfter. A key the store
	// does not hold is full: nothing is written. Arguments are checked as by
	// [ValidateRefund].
	RefundN(ctx context.Context, key string, limit Limit, n int, age time.Duration) (Result, error)
}

// ValidateRefund checks the arguments of [Refunder.RefundN]: those of
// [ValidateCall] and an age that is not negative.
func ValidateRefund(key string, limit Limit, n int, age time.Duration) error {
	if err := ValidateCall(key, limit, n); err != nil {
		return err
	}
	if age < 0 {
		return fmt.Errorf("%w: %v", ErrInvalidAge, age)
	}
	return nil
}

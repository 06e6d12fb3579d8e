package ratelimit

import (
	"context"
	"errors"
	"time"
)

// AllowAll decides several takes as one: the request passes only if every
// take is allowed, and a denied request takes nothing from any of them. A
// [MultiStore] does it atomically. Any other Store, or a MultiStore that
// answers [ErrCrossSlot], is called once per take:
//   - a [Refunder] takes each in order, and if any is denied, the takes
//     that were allowed are refunded: every result is the store's own
//     decision (a denied take's RetryAfter exact), and one call per take
//     when all pass. Until the refunds, a concurrent request sees those
//     budgets spent; a refund that fails leaves its take spent, and a
//     window's refund gives back less, never more, as RefundN says.
//   - any other store gets one report call per take (n = 0), then, if all
//     have room, one call per take in order: nothing is taken when a take
//     is denied at the report, but a concurrent request that spends a
//     budget between the report and the take can leave earlier takes
//     spent. A denial at the report tells a RetryAfter that is never
//     early, and exact for a token bucket and a fixed window.
//
// That is the documented cost of not being atomic.
func AllowAll(ctx context.Context, store Store, takes []Take, results []Result) error {
	if ms, ok := store.(MultiStore); ok {
		err := ms.AllowAll(ctx, takes, results) // it checks its arguments
		if !errors.Is(err, ErrCrossSlot) {
			return err
		}
	}
	if err := ValidateTakes(takes, results); err != nil {
		return err
	}
	if rf, ok := store.(Refunder); ok {
		return takeThenRefund(ctx, rf, takes, results)
	}
	return reportThenTake(ctx, store, takes, results)
}

// takeThenRefund is AllowAll on a Refunder: every take decided by the
// store, then what the allowed ones took given back if one was denied.
func takeThenRefund(ctx context.Context, rf Refunder, takes []Take, results []Result) error {
	sent := time.Now()
	allowed := true
	for i, t := range takes {
		res, err := rf.AllowN(ctx, t.Key, t.Limit, t.N)
		if err != nil {
			refundAllowed(ctx, rf, takes[:i], results[:i], sent)
			return err
		}
		results[i] = res
		allowed = allowed && res.Allowed
	}
	if !allowed {
		refundAllowed(ctx, rf, takes, results, sent)
	}
	return nil
}

// refundAllowed gives back what each allowed take of takes took, decided
// since sent, and makes its result the budget after the refund: allowed,
// as the take alone was.
func refundAllowed(ctx context.Context, rf Refunder, takes []Take, results []Result, sent time.Time) {
	age := time.Since(sent) + refundSlack
	for i, t := range takes {
		if !results[i].Allowed || t.N == 0 {
			continue
		}
		if res, err := rf.RefundN(ctx, t.Key, t.Limit, t.N, age); err == nil {
			res.Allowed = true
			results[i] = res
		}
	}
}

// reportThenTake is AllowAll on a store that cannot refund: a report of
// every take, then, if all have room, the takes.
func reportThenTake(ctx context.Context, store Store, takes []Take, results []Result) error {
	allowed := true
	for i, t := range takes {
		res, err := store.AllowN(ctx, t.Key, t.Limit, 0)
		if err != nil {
			return err
		}
		if !res.Allowed || res.Remaining < t.N {
			// no room for the take (a report is denied only on a budget
			// over its limit, and then says the wait for a take of 0)
			if t.N > 0 {
				res.RetryAfter = max(untilItHolds(res, t.N), 1) // never early
			}
			res.Allowed = false
		}
		results[i] = res
		allowed = allowed && res.Allowed
	}
	if !allowed {
		return nil
	}
	for i, t := range takes {
		res, err := store.AllowN(ctx, t.Key, t.Limit, t.N)
		if err != nil {
			return err
		}
		results[i] = res
		if !res.Allowed {
			// Spent by another request between the report and the take:
			// the request is denied, and the later takes are not taken
			// (their reports, which had room, stay as results). The earlier
			// ones were: the documented cost of a store that cannot refund.
			return nil
		}
	}
	return nil
}

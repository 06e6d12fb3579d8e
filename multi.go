package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Take is one limit of a request decided by [AllowAll]: n tokens of key's
// budget under limit.
type Take struct {
	Key   string // the key whose budget is taken from
	Limit Limit  // the budget's limit
	N     int    // the tokens to take: the request's cost
}

// MultiStore is implemented by stores that decide several takes at once,
// all or nothing: the memory store under its locks, the Redis store in one
// script call (on Redis Cluster when all keys share a slot).
type MultiStore interface {
	Store
	// AllowAll decides takes atomically and writes the decision of takes[i]
	// to results[i] (len(results) == len(takes)). If every take is allowed,
	// each takes its tokens and results[i].Allowed is true. Otherwise none
	// takes anything, and results[i] says whether takes[i] alone would have
	// passed (Allowed) and, for those that would not, their RetryAfter;
	// Remaining and ResetAfter then describe the budgets as they are. Keys
	// must be distinct. Arguments are checked as by [ValidateCall].
	AllowAll(ctx context.Context, takes []Take, results []Result) error
}

// ErrDuplicateKey reports two takes of one AllowAll call with the same key.
var ErrDuplicateKey = errors.New("ratelimit: AllowAll: keys must be distinct")

// ValidateTakes checks the arguments of [MultiStore.AllowAll]: one result
// per take, each take valid as by [ValidateCall], and no key twice (an
// error that names the takes, not the key, which may be a client's data).
func ValidateTakes(takes []Take, results []Result) error {
	if len(results) != len(takes) {
		return fmt.Errorf("ratelimit: AllowAll: %d results for %d takes", len(results), len(takes))
	}
	for i := range takes {
		t := &takes[i]
		if err := ValidateCall(t.Key, t.Limit, t.N); err != nil {
			return err
		}
	}
	if len(takes) > 32 {
		seen := make(map[string]int, len(takes))
		for i := range takes {
			if j, dup := seen[takes[i].Key]; dup {
				return fmt.Errorf("%w: takes %d and %d", ErrDuplicateKey, j, i)
			}
			seen[takes[i].Key] = i
		}
		return nil
	}
	for i := range takes {
		for j := range i {
			if takes[i].Key == takes[j].Key {
				return fmt.Errorf("%w: takes %d and %d", ErrDuplicateKey, j, i)
			}
		}
	}
	return nil
}

// ErrCrossSlot is returned by a MultiStore that cannot decide the keys of
// one call atomically, such as Redis Cluster keys in different slots;
// [AllowAll] then decides them one by one.
var ErrCrossSlot = errors.New("ratelimit: keys cannot be decided in one atomic step")

// AllowAll decides several takes as one: the request passes only if every
// take is allowed, and a denied request takes nothing from any of them. A
// [MultiStore] does it atomically. Any other Store, or a MultiStore that
// answers [ErrCrossSlot], gets one report call per take (n = 0), then, if
// all have room, one call per take in order: nothing is taken when a take
// is denied at the report, but a concurrent request that spends a budget
// between the report and the take can leave earlier takes spent, the
// documented cost of not being atomic.
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
	allowed := true
	for i, t := range takes {
		res, err := store.AllowN(ctx, t.Key, t.Limit, 0)
		if err != nil {
			return err
		}
		res.Allowed = res.Remaining >= t.N
		if !res.Allowed {
			res.RetryAfter = retryFromReport(t.Limit, res, t.N)
			allowed = false
		}
		results[i] = res
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
			// ones were: the documented cost of a store that is not a
			// MultiStore.
			return nil
		}
	}
	return nil
}

// retryFromReport estimates, from a report (n = 0), how long until n tokens
// pass: for a token bucket the time to full less the time the last
// capacity − n tokens take; for the windows, whose report says less, the
// time until full, which is never early.
func retryFromReport(l Limit, res Result, n int) time.Duration {
	if l.Algorithm != TokenBucket {
		return max(res.ResetAfter, 1)
	}
	rest := time.Duration(float64(l.Capacity()-n) / l.PerSecondRate() * float64(time.Second))
	return max(res.ResetAfter-rest, 1)
}

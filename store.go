package ratelimit

// The contract between a Limiter and its stores: Store, Local, MultiStore,
// their arguments (Take) and the checks every store makes (ValidateCall,
// ValidateTakes); AllowAll over any Store is in allowall.go.

import (
	"context"
	"fmt"
)

// Store keeps the budgets of many keys. Implementations must be safe for
// concurrent use by multiple goroutines. The package store/storetest has
// the conformance suite that every Store passes.
type Store interface {
	// AllowN takes n tokens from key's budget under limit, atomically, if
	// the budget holds them. A denied request takes nothing. n == 0 reports
	// the state without taking anything. The limit travels with each call,
	// so one store serves every policy; a key is best used with one limit.
	//
	// Invalid limits, n < 0, n above limit.Capacity() and an empty key are
	// errors (see [ValidateCall]); so are a done context and a failed
	// backend.
	AllowN(ctx context.Context, key string, limit Limit, n int) (Result, error)
}

// ValidateCall checks the arguments of [Store.AllowN], so that every store
// refuses the same calls with the same errors.
func ValidateCall(key string, limit Limit, n int) error {
	if err := limit.Validate(); err != nil {
		return err
	}
	if key == "" {
		return ErrEmptyKey
	}
	if n < 0 {
		return fmt.Errorf("%w: n = %d is negative", ErrInvalidCost, n)
	}
	if c := limit.Capacity(); n > c {
		return fmt.Errorf("%w: n = %d, capacity %d", ErrCostExceedsCapacity, n, c)
	}
	return nil
}

// Local is implemented by stores that decide in the process's own memory
// and never wait on I/O, such as store/memory. A limiter calls a Local store
// directly: no time budget, no breaker, no deny cache, since it cannot hang
// and has nothing to spare. Wrappers of a store should forward Local.
type Local interface {
	// Local reports whether the store decides in the process's memory,
	// without I/O; a wrapper answers for the store it wraps.
	Local() bool
}

// isLocal reports whether s says it is [Local].
func isLocal(s any) bool {
	l, ok := s.(Local)
	return ok && l.Local()
}

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
	return distinctKeys(takes)
}

// distinctKeys returns an error wrapping [ErrDuplicateKey] that names the
// first two takes of one key, nil if there are none: a map past 32 takes,
// so that a request of thousands (an Envoy request's descriptors) costs
// linear time.
func distinctKeys(takes []Take) error {
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

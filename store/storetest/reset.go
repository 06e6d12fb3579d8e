package storetest

import (
	"context"
	"errors"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of [ratelimit.Resetter], run for stores that implement it.

func isResetter(probe ratelimit.Store) bool {
	_, ok := probe.(ratelimit.Resetter)
	return ok
}

func resetCases() []testCase {
	return []testCase{
		{name: "Reset/a spent budget is full again at once, and only its key's", everyAlgorithm: true, run: resetFull},
		{name: "Reset/bad input is an error", run: resetBadInput},
	}
}

// resetFull: spend two keys' budgets, reset one: it is full (a report says
// so, and its whole capacity passes), the other stays spent.
func resetFull(e *env) {
	l := e.slowLimit(3)
	r := e.store.(ratelimit.Resetter)
	for _, key := range []string{"reset/a", "reset/b"} {
		e.expect(key, l, 3, true, 0)
		e.expect(key, l, 1, false, 0)
	}
	if err := r.Reset(context.Background(), "reset/a", l); err != nil {
		e.t.Fatalf("Reset: %v", err)
	}
	if res := e.expect("reset/a", l, 0, true, 3); res.ResetAfter != 0 {
		e.t.Fatalf("a reset key reports ResetAfter %v, want 0", res.ResetAfter)
	}
	e.expect("reset/a", l, 3, true, 0)
	e.expect("reset/b", l, 1, false, 0)
	// Resetting a key never seen is no error.
	if err := r.Reset(context.Background(), "reset/never", l); err != nil {
		e.t.Fatalf("Reset of a new key: %v", err)
	}
}

func resetBadInput(e *env) {
	r := e.store.(ratelimit.Resetter)
	ctx := context.Background()
	if err := r.Reset(ctx, "", ratelimit.PerSecond(1)); !errors.Is(err, ratelimit.ErrEmptyKey) {
		e.t.Fatalf("Reset of an empty key = %v, want ErrEmptyKey", err)
	}
	if err := r.Reset(ctx, "k", ratelimit.Limit{}); !errors.Is(err, ratelimit.ErrInvalidLimit) {
		e.t.Fatalf("Reset under an invalid limit = %v, want ErrInvalidLimit", err)
	}
}

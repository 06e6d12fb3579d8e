package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// defaultTimeout is the time budget of a decision on a store that is not
// [Local], such as Redis, unless [WithTimeout] sets another. A Redis round
// trip takes well under a millisecond on a LAN and a few on a busy server;
// 100 ms leaves room for that and a garbage-collection pause, while a Redis
// that hangs costs a request at most a tenth of a second (and, once the
// [Breaker] opens, nothing).
const defaultTimeout = 100 * time.Millisecond

// WithTimeout sets the time budget of each decision: a store that has not
// answered after d is a failure ([ErrTimeout]) and the failure policy
// answers the request (fail open, [WithFailClosed] or [WithFallback]). The
// bound holds whatever the store's client does with contexts: the store is
// called on a goroutine of its own and left to finish in the background,
// its context cancelled (a call that never returns keeps its goroutine:
// the [Breaker] bounds how many calls an outage leaves waiting, and client
// read timeouts, see docs/redis.md, how long). A store that returns by its
// context's deadline is called on the request's own goroutine instead,
// with the budget as that deadline, which costs a decision about a
// goroutine and a channel less: store/redis over a client with
// ContextTimeoutEnabled, the recommended one, or any store with a
// KeepsDeadlines method that reports true. The calls of such a store that
// start within a tick of each other (1/64 of d, at most a millisecond)
// share one deadline, and one timer, so a call's budget may be up to a
// tick longer than d; the end of the request's own context does not
// cancel such a call, but the limiter answers the request by it once the
// call returns, and a store that queues decisions does not send one whose
// request ended ([Sending]). A [Local] store, which cannot
// hang, is called as it is. The default is 100 ms for stores that are not
// Local, none for Local ones; d == 0 turns the bound off and a negative d
// is an error.
//
// Only this budget and the store's own errors count against the store in
// the breaker. A request whose own context ends first (its client went
// away, or its own deadline passed, such as chi's middleware.Timeout sets)
// is not served, whatever the failure policy, and never opens the breaker,
// even when the store's client fails at that deadline with an i/o timeout
// or the store does not send the call as that deadline would pass first:
// the middleware answers 503 for a deadline (nothing for a client gone),
// AllowN and Wait return the context's error. An answer that is ready when
// the budget's timer fires stands.
// What is left: under CPU starvation (far more runnable goroutines than
// cores), an answer the store sent in time but the process read after the
// timer fired counts as a timeout. Without the store's clock in its reply
// nothing tells it apart from a slow store, and a timer that fires late
// cannot be taken as starvation either: a store that hangs on a starved
// machine must still open the breaker. Give the budget room for the
// scheduling delays of the machine (GOMAXPROCS, CPU limits), or watch
// ratelimit_store_duration_seconds for them.
//
// An in-flight limit (package inflight) takes it too: the same budget,
// default and failure policy bound each of its store calls.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("ratelimit: WithTimeout(%v): negative", d)
		}
		c.timeout = d
		return nil
	}
}

// budget is a store call's time budget, with its errors made once.
type budget struct {
	d       time.Duration
	timeout error                  // the store did not answer within d
	notSent error                  // the store held the call queued for all of d (shed.go)
	mode    callMode               // how the store's calls are held to d (deadline.go)
	cohort  atomic.Pointer[cohort] // the calls by deadline that start now share it (cohort.go)
}

func newBudget(d time.Duration) *budget {
	timeout := fmt.Errorf("%w after %v: %w", ErrTimeout, d, context.DeadlineExceeded)
	return &budget{d: d, timeout: timeout, notSent: fmt.Errorf("%w: %w", ErrNotSent, timeout)}
}

// within runs call and waits at most b's budget for its answer; a nil b
// waits as long as the call takes. The call runs on a goroutine of its own,
// with a context cancelled when the wait ends; its answer goes to a
// buffered channel, so a call that answers after the wait ends leaves
// nothing behind, and what it returns is never read (see withinOr for a
// call whose answer must be given back). A call that did not reach the
// store, or that the store held [Queued], for the whole budget is
// abandoned (never sent) and fails with b.notSent, which the breaker does
// not count.
func within[T any](ctx context.Context, b *budget, call func(context.Context) (T, error)) (T, error) {
	return withinOr(ctx, b, call, nil)
}

// The calls within a budget below call the store themselves where it needs
// no goroutine (b.inline), so that they make no closure either.

// inline reports whether b's calls run on the caller's goroutine: without
// a budget, or on a store that cannot hang or keeps its deadlines.
func (b *budget) inline() bool { return b == nil || b.mode != onGoroutine }

// allowWithin is store.AllowN within b, its Result written to res: in
// place, the Result is copied once, which saves a decision on a Local
// store about 10 ns.
func allowWithin(ctx context.Context, b *budget, store Store, key string, limit Limit, n int, res *Result) (err error) {
	if b.inline() {
		bctx, cancel := b.bound(ctx)
		*res, err = store.AllowN(bctx, key, limit, n)
		// Not a call by deadline: it stands, as ended's first line says,
		// without the call, which the inliner cannot take (generic, past
		// its budget); a decision on a Local store saves about 30 ns.
		if cancel == nil {
			return err
		}
		*res, err = ended(bctx, cancel, b, *res, err, nil)
		return err
	}
	*res, err = within(ctx, b, func(ctx context.Context) (Result, error) { return store.AllowN(ctx, key, limit, n) })
	return err
}

// reserveWithin is rs.ReserveN within b.
func reserveWithin(ctx context.Context, b *budget, rs Reserver, key string, limit Limit, n int, maxWait time.Duration) (Reservation, error) {
	if b.inline() {
		bctx, cancel := b.bound(ctx)
		r, err := rs.ReserveN(bctx, key, limit, n, maxWait)
		return ended(bctx, cancel, b, r, err, nil)
	}
	return within(ctx, b, func(ctx context.Context) (Reservation, error) { return rs.ReserveN(ctx, key, limit, n, maxWait) })
}

// refundWithin is rf.RefundN within b.
func refundWithin(ctx context.Context, b *budget, rf Refunder, key string, limit Limit, n int, age time.Duration) (Result, error) {
	if b.inline() {
		bctx, cancel := b.bound(ctx)
		res, err := rf.RefundN(bctx, key, limit, n, age)
		return ended(bctx, cancel, b, res, err, nil)
	}
	return within(ctx, b, func(ctx context.Context) (Result, error) { return rf.RefundN(ctx, key, limit, n, age) })
}

// resetWithin is r.Reset within b.
func resetWithin(ctx context.Context, b *budget, r Resetter, key string, limit Limit) error {
	if b.inline() {
		bctx, cancel := b.bound(ctx)
		err := r.Reset(bctx, key, limit)
		_, err = ended(bctx, cancel, b, struct{}{}, err, nil)
		return err
	}
	_, err := within(ctx, b, func(ctx context.Context) (struct{}, error) { return struct{}{}, r.Reset(ctx, key, limit) })
	return err
}

// allowAllWithin is AllowAll within b: the call writes results of its own,
// copied out only if it answered in time.
func allowAllWithin(ctx context.Context, b *budget, store Store, takes []Take, results []Result) error {
	if b.inline() { // the call ends before this does: it may write results
		bctx, cancel := b.bound(ctx)
		err := AllowAll(bctx, store, takes, results)
		if _, err = ended(bctx, cancel, b, struct{}{}, err, nil); err != nil && cancel != nil {
			clear(results) // what a call past its budget wrote is not an answer
		}
		return err
	}
	// The call may outlive the wait, and the caller reuses takes (pooled
	// passes): the late call reads a copy of its own.
	takes = slices.Clone(takes)
	own, err := within(ctx, b, func(ctx context.Context) ([]Result, error) {
		own := make([]Result, len(results))
		return own, AllowAll(ctx, store, takes, own)
	})
	copy(results, own)
	return err
}

// callEnd is what became of a store call.
type callEnd int

const (
	answered     callEnd = iota // the store decided
	refused                     // the store refused the call's arguments: the call was wrong
	requestEnded                // the request's own context ended: the store is not to blame
	shed                        // the store never sent the call (ErrNotSent): busy, not failing
	storeFailed                 // the store failed: the failure policy answers
)

// isCallError reports an error of the call's arguments rather than of the
// store.
func isCallError(err error) bool {
	return errors.Is(err, ErrInvalidCost) || errors.Is(err, ErrCostExceedsCapacity) ||
		errors.Is(err, ErrInvalidLimit) || errors.Is(err, ErrEmptyKey)
}

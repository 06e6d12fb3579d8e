package ratelimit

import (
	"context"
	"errors"
	"time"
)

// How a store call is held to its time budget. A store that cannot hang
// ([Local]) is called as it is. A store that says it returns by its
// context's deadline is called on the caller's goroutine, its context
// given the budget's deadline: no goroutine, no channel, no timer of its
// own (cohort.go), and the store's own error says whether it sent the
// call. Any other store is called on a
// goroutine of its own while the caller waits at most the budget
// (withinOr, guard.go).

// callMode is how a budget holds a store's calls to it.
type callMode uint8

const (
	onGoroutine callMode = iota // the call runs on a goroutine of its own; the caller waits at most the budget
	byDeadline                  // the call runs on the caller's goroutine with the budget as its context's deadline
	unbounded                   // the store cannot hang (Local): the call runs as it is
)

// deadlineKeeper is implemented by stores whose every call returns by its
// context's deadline (give or take the scheduling of the process), with an
// error that wraps [ErrNotSent] when the store never sent it, such as
// store/redis over a client with ContextTimeoutEnabled. A store's answer is
// never the limiter's to decide: a store that does not keep to its
// deadline and says it does holds requests for as long as it takes.
// Wrappers of such a store should forward KeepsDeadlines.
type deadlineKeeper interface {
	KeepsDeadlines() bool
}

// modeOf returns how a budget holds the calls of store.
func modeOf(store any) callMode {
	if isLocal(store) {
		return unbounded
	}
	if k, ok := store.(deadlineKeeper); ok && k.KeepsDeadlines() {
		return byDeadline
	}
	return onGoroutine
}

// storeBudget returns a budget of d for the calls of store.
func storeBudget(d time.Duration, store any) *budget {
	b := newBudget(d)
	b.mode = modeOf(store)
	return b
}

// bound returns the context of an inline call (b.inline): for a call by
// deadline, one with the budget's deadline, with its cancel func; else
// ctx itself and a nil func. It is a context of the budget's current
// cohort (cohort.go), which costs a call no timer, unless ctx has ended
// already or ends before the cohort (a request deadline nearer than the
// budget): a context of its own, as context.WithTimeoutCause makes, then
// ends the call exactly as ctx does.
func (b *budget) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if b == nil || b.mode != byDeadline {
		return ctx, nil
	}
	c := b.cohortNow()
	if d, ok := ctx.Deadline(); ctx.Err() == nil && (!ok || !d.Before(c.end)) {
		return &boundCtx{parent: ctx, c: c}, noCancel
	}
	return context.WithTimeoutCause(ctx, b.d, b.timeout)
}

// noCancel is the cancel func of a cohort's context, which has nothing of
// its own to release.
func noCancel() {}

// ended classifies what a call by deadline returned, v and err, once it
// returned within bctx (from bound; cancel is its, nil for a call that is
// not by deadline, which always stands): as withinOr does an
// answer that came back on the call's own goroutine. A call that returned
// while bctx was live stands, answer or error. Past it, the answer is not
// the caller's (it goes to late, on a goroutine of its own, when late is
// not nil): the caller gets the request's own error if its context ended
// first, else [ErrNotSent]'s if the store never sent the call, else
// [ErrTimeout]'s. An error that a call of a cohort returns once the
// cohort's deadline is past is past it, even before its timer has run.
func ended[T any](bctx context.Context, cancel context.CancelFunc, b *budget, v T, err error, late func(T, error)) (T, error) {
	if cancel == nil { // not a call by deadline: it stands
		return v, err
	}
	var cause error
	if x, ok := bctx.(*boundCtx); ok {
		switch {
		case x.parent.Err() != nil:
			cause = context.Cause(x.parent)
		case x.c.over() || err != nil && !time.Now().Before(x.c.end):
			cause = b.timeout
		default:
			return v, err
		}
	} else {
		if bctx.Err() == nil {
			cancel()
			return v, err
		}
		cause = context.Cause(bctx)
		cancel()
	}
	if late != nil {
		go late(v, err)
	}
	var zero T
	switch {
	case cause != b.timeout:
		return zero, cause // the request's own context ended first
	case errors.Is(err, ErrNotSent):
		return zero, b.notSent // never sent: shed
	}
	return zero, b.timeout
}

// byDeadlineOr is withinOr for a call by deadline.
func byDeadlineOr[T any](ctx context.Context, b *budget, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	bctx, cancel := b.bound(ctx)
	v, err := call(bctx)
	return ended(bctx, cancel, b, v, err, late)
}

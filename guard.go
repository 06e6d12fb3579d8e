package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// guard is what stands between a caller and its store: the time budget of
// each call, the breaker in front of the store and the clock the breaker
// reads. A Limiter's pass and an in-flight limit each hold one, so that a
// store call is bounded, counted and classified the same way whoever
// makes it: enter, call within the budget, settle.
type guard struct {
	budget  *budget  // the store call's time budget; nil for none
	breaker *Breaker // nil for none
	now     func() time.Time
	// lastAnswer is when the store last answered, in Unix ns, kept when
	// track is set (a breaker or a fallback's debts read it).
	lastAnswer atomic.Int64
	// firstShed is when a decision was first shed, in Unix ns, while the
	// store had never answered (shedBehindAnswers).
	firstShed atomic.Int64
	track     bool
	noted     atomic.Pointer[cohort] // the budget's cohort when lastAnswer was last noted (answered)
}

// enter reports whether a call may go to the store: whether it is the
// probe of a half-open breaker (to be ended by settle), or the error of
// the open breaker that keeps it from the store.
func (g *guard) enter() (probe bool, err error) {
	if g.breaker == nil {
		return false, nil
	}
	return g.enterAt(g.now())
}

// enterAt is enter for a caller that read the clock already (now).
func (g *guard) enterAt(now time.Time) (probe bool, err error) {
	if g.breaker == nil {
		return false, nil
	}
	ok, probe := g.breaker.allow(now)
	if !ok {
		return false, g.breaker.openError()
	}
	return probe, nil
}

// settle classifies how a store call made for ctx ended with err, and
// tells the breaker, if any, whose probe the call may have been: only the
// store's own failures and its time budget count against it, and only
// while it answers no other call (answeredWithinBudget). A store that
// answers others while some calls fail or time out is failing in part: a
// Redis Cluster master that hangs while the others answer, a call the
// store did not send ([ErrNotSent]: shedding) behind calls it answers.
// The failure policy answers those calls alone; opening the breaker would
// send every request, the healthy part's too, to it.
//
// A probe's call ran on past its request's end (callContext): the breaker
// is told what the store did, and the request, if it ended, is not served
// (requestEnded), whatever the store answered.
func (g *guard) settle(ctx context.Context, err error, probe bool) callEnd {
	end := storeFailed
	switch {
	case err == nil:
		end = answered
	case isCallError(err):
		end = refused
	case !probe && (ownEnd(ctx) || errors.Is(err, ErrNotSent) && g.ownDeadlineFirst(ctx)):
		end = requestEnded // a probe's call was held to no end of its request's
	case errors.Is(err, ErrNotSent):
		end = shed
	}
	if end == answered && g.track {
		g.answered()
	}
	if g.breaker != nil {
		switch {
		case end == answered:
			g.breaker.success(probe)
		case end == storeFailed && (probe || !g.answeredWithinBudget()),
			end == shed && (probe || !g.shedBehindAnswers()):
			g.breaker.failure(g.now(), probe, err)
		default:
			g.breaker.release(probe)
		}
	}
	if probe && end != refused && ownEnd(ctx) {
		return requestEnded
	}
	return end
}

// answered notes that the store answered now. It writes lastAnswer only
// once it is a tick out of date (1/64 of the budget, at most a
// millisecond, as cohort.go's): written by every decision, its cache line
// would move between the cores on every one. On a budget of calls by
// deadline it reads the clock only for the first answer since the
// budget's current cohort began (a new one begins every tick while calls
// start): read on every answer, the clock cost a decision more than the
// rest of its bookkeeping.
func (g *guard) answered() {
	if b := g.budget; b != nil && b.mode == byDeadline {
		c := b.cohort.Load()
		if c != nil && g.noted.Load() == c {
			return // noted in this cohort's time already
		}
		g.noted.Store(c)
	}
	tick := maxTick
	if g.budget != nil {
		tick = g.budget.tick()
	}
	if now := g.now().UnixNano(); now-g.lastAnswer.Load() >= int64(tick) {
		g.lastAnswer.Store(now)
	}
}

// answeredWithinBudget reports whether the store answered a call within
// the last time budget: a decision it did not send then waited behind
// calls it answers (a flood on a slow store, load to shed), whereas with
// no answer for that long the calls in flight are stuck (a hung store),
// and what waits behind them counts against it too, so that the breaker
// opens.
func (g *guard) answeredWithinBudget() bool {
	last := g.lastAnswer.Load()
	return last != 0 && g.budget != nil && g.now().UnixNano()-last <= int64(g.budget.d)
}

// shedBehindAnswers reports whether a decision the store did not send
// waited behind calls it answers: answeredWithinBudget, or, for a store
// that has never answered, within a budget of the first decision it shed.
// The first burst of a cold start (connections still dialled, scripts
// still loaded) sheds decisions behind calls about to be answered; a
// store that never answers still opens the breaker, a budget later.
func (g *guard) shedBehindAnswers() bool {
	if g.answeredWithinBudget() {
		return true
	}
	if g.budget == nil || g.lastAnswer.Load() != 0 {
		return false
	}
	now := g.now().UnixNano()
	g.firstShed.CompareAndSwap(0, now)
	return now-g.firstShed.Load() <= int64(g.budget.d)
}

// withinOr is [within] for a call whose answer holds something to give
// back, such as an in-flight slot: every answer it does not return, one
// that came after the wait ended or that the caller's context made moot,
// goes to late, on a goroutine other than the caller's (the call's own,
// when the answer comes after the wait). late may be nil.
func withinOr[T any](ctx context.Context, b *budget, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	switch {
	case b == nil || b.mode == unbounded:
		return call(ctx)
	case b.mode == byDeadline:
		return byDeadlineOr(ctx, b, call, late) // deadline.go
	}
	mark := new(sendMark)
	ctx = context.WithValue(ctx, sendMarkKey{}, mark)
	ctx, cancel := context.WithTimeoutCause(ctx, b.d, b.timeout)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	var state atomic.Int32 // 0 waiting, 1 answered, 2 the wait ended first: late takes the answer
	go func() {
		var a answer
		if !mark.enter() {
			a.err = b.notSent
		} else {
			a.v, a.err = call(ctx)
		}
		if state.CompareAndSwap(0, 1) {
			done <- a
		} else if late != nil {
			late(a.v, a.err)
		}
	}()
	drop := func(a answer) {
		if late != nil {
			go late(a.v, a.err)
		}
	}
	var zero T
	select {
	case a := <-done:
		if a.err != nil && ctx.Err() != nil {
			drop(a)
			if context.Cause(ctx) == b.timeout && errors.Is(a.err, ErrNotSent) {
				return zero, b.notSent
			}
			return zero, context.Cause(ctx) // say why the context ended
		}
		return a.v, a.err
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	if !state.CompareAndSwap(0, 2) { // answered as the wait ended
		a := <-done
		if cause == b.timeout && a.err == nil {
			return a.v, nil // ready when the budget's timer fired: the answer stands
		}
		drop(a)
	}
	if cause != b.timeout {
		mark.abandon()     // nobody waits for it: the store need not send it
		return zero, cause // the request's own context ended first
	}
	if mark.abandon() {
		return zero, b.notSent // still queued: shed, never sent
	}
	return zero, b.timeout
}

// ownEnd reports whether ctx, a request's own context, has ended: done, or
// past its deadline. A store client that holds its socket to ctx's
// deadline (go-redis with ContextTimeoutEnabled) fails with an i/o timeout
// at that instant, which may be read before ctx's own timer has marked it
// done: that failure is the request's, not the store's.
func ownEnd(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// ownDeadlineFirst reports whether ctx's own deadline comes before the end
// of the time budget of a call starting now. A store that did not send a
// call ([ErrNotSent]) because that deadline would pass while it queued
// (store/redis does so) refused it for the request's sake: the request
// ends before any answer, and the store is not to blame.
func (g *guard) ownDeadlineFirst(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && (g.budget == nil || g.budget.d == 0 || d.Before(time.Now().Add(g.budget.d)))
}

// callContext is the context of a store call made for ctx: ctx, but for a
// half-open breaker's probe, which runs to the time budget whatever its
// request's own end (its client gone, its deadline passed): it must prove
// the store up or down, or a flood of requests with short deadlines would
// hold the breaker half-open against a store that answers. The request,
// ended, is not served all the same.
func callContext(ctx context.Context, probe bool) context.Context {
	if probe {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

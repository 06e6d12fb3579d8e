package ratelimit

import (
	"context"
	"sync/atomic"
	"time"
)

// A call by deadline (deadline.go) needs a context whose deadline is its
// budget's end and whose Done closes then, for whatever in the store waits
// on it (a queue, a connection pool). context.WithTimeout makes that with a
// timer per call, and under many goroutines the timers cost a decision
// more than the rest of the limiter. The calls of one budget that start
// within a tick of each other share a cohort instead: one deadline, a tick
// at most past each call's own budget, one channel and one timer that
// closes it. A call's context (boundCtx) is the request's own context for
// its values, with its cohort's deadline: like
// context.WithDeadline(context.WithoutCancel(ctx), end), at the cost of
// one small allocation. The request's own end is read by the limiter when
// the call returns, and by a store that queues it before it sends it
// ([Sending]), rather than cancelling the call's context: a store that
// keeps deadlines returns by the cohort's end anyway.

// maxTick is the most by which a cohort's deadline may be later than the
// budget of a call of it.
const maxTick = time.Millisecond

// cohort is a deadline shared by the calls of a budget that start within
// a tick of each other.
type cohort struct {
	end  time.Time     // the deadline; read with the monotonic clock
	done chan struct{} // closed at end, by the cohort's timer
	past atomic.Bool   // set as done is closed
}

// over reports whether c's timer has closed its done channel.
func (c *cohort) over() bool { return c.past.Load() }

func (c *cohort) close() {
	c.past.Store(true)
	close(c.done)
}

// tick is how long a cohort of b takes calls: 1/64 of the budget, at most
// maxTick, so that no call's budget grows by more than either.
func (b *budget) tick() time.Duration { return min(b.d/64, maxTick) }

// cohortNow returns the cohort of a call that starts now: b's current
// one, if its end leaves the call its whole budget, else a new one that
// ends a tick past the call's budget. Only a new one reads the wall
// clock, for its deadline: the others read the monotonic clock.
func (b *budget) cohortNow() *cohort {
	c := b.cohort.Load()
	if c != nil && time.Until(c.end) >= b.d {
		return c
	}
	d := b.d + b.tick()
	next := &cohort{end: time.Now().Add(d), done: make(chan struct{})}
	if !b.cohort.CompareAndSwap(c, next) {
		// Another call started one: it will do, unless it is too early.
		if c = b.cohort.Load(); c != nil && time.Until(c.end) >= b.d {
			return c
		}
	}
	time.AfterFunc(d, next.close)
	return next
}

// boundCtx is the context of a call of a cohort: the values of the
// request's context (parent), the cohort's deadline, never cancelled but
// by it.
type boundCtx struct {
	parent context.Context
	c      *cohort
}

func (x *boundCtx) Deadline() (time.Time, bool) { return x.c.end, true }
func (x *boundCtx) Done() <-chan struct{}       { return x.c.done }

func (x *boundCtx) Err() error {
	if x.c.over() {
		return context.DeadlineExceeded
	}
	return nil
}

// Value is the request context's, but for the key of [Sending], which
// finds x.
func (x *boundCtx) Value(key any) any {
	if key == (sendMarkKey{}) {
		return x
	}
	return x.parent.Value(key)
}

func (x *boundCtx) String() string { return "ratelimit.budget(" + x.c.end.String() + ")" }

package ratelimit

import (
	"context"
	"sync/atomic"
)

// The states of a decision on its way to a store within a budget.
const (
	sendPending   int32 = iota // the call has not reached the store yet
	sendEntered                // in the store, which said nothing: a timeout counts as a failure
	sendQueued                 // Queued: waiting in the store's queue
	sendSent                   // Sending returned true
	sendAbandoned              // the budget ended first: never to be sent
)

// sendMark is the state of one decision within a budget; within puts it in
// the call's context.
type sendMark struct{ state atomic.Int32 }

type sendMarkKey struct{}

func markOf(ctx context.Context) *sendMark {
	m, _ := ctx.Value(sendMarkKey{}).(*sendMark)
	return m
}

// Queued tells the limiter that asked for the decision of ctx that the
// store holds it in a queue, not yet sent, such as a decision waiting for
// a batch (store/redis's group commit). If the decision's time budget
// ends before [Sending] is called, the limiter answers it by its failure
// policy as [ErrNotSent], without counting it against the store. A context
// of no limiter's budget ignores it.
func Queued(ctx context.Context) {
	if m := markOf(ctx); m != nil {
		m.state.CompareAndSwap(sendEntered, sendQueued)
	}
}

// Sending tells the limiter that asked for the decision of ctx that the
// store is about to send it: from then on, a decision that is not answered
// within its budget counts against the store. It returns false if the
// budget ended while the decision was [Queued], or the request the
// decision is for ended (its client went away): the store must then not
// send it, and returns an error that wraps [ErrNotSent]. It returns true
// for a context of no limiter's budget. A store calls it once per call, as
// the call leaves the queue to be sent, or before a call it sends at once;
// a call whose context ended while queued is dropped with an error that
// wraps ErrNotSent, without calling Sending. A decision the store makes in
// several calls under one context (an [AllowAll] that reports, then
// takes) is let go call after call once its first call was sent.
func Sending(ctx context.Context) bool {
	switch m := ctx.Value(sendMarkKey{}).(type) {
	case *sendMark:
		// A decision the store reads in several calls (an AllowAll across
		// Cluster slots: a report, then the takes) goes on once its first
		// call is sent.
		return m.state.CompareAndSwap(sendQueued, sendSent) || m.state.CompareAndSwap(sendEntered, sendSent) ||
			m.state.Load() == sendSent
	case *boundCtx: // a call by deadline (cohort.go): not for a request that ended
		return m.parent.Err() == nil
	}
	return true
}

// enter lets the call reach the store, unless its budget ended before:
// under CPU starvation its goroutine may start late, and then never calls
// the store.
func (m *sendMark) enter() bool {
	return m.state.CompareAndSwap(sendPending, sendEntered)
}

// abandon ends the wait for a decision whose budget ended: true if it had
// not reached the store or the store still held it queued: it is then
// never sent.
func (m *sendMark) abandon() bool {
	return m.state.CompareAndSwap(sendPending, sendAbandoned) || m.state.CompareAndSwap(sendQueued, sendAbandoned)
}

package ratelimit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// keeper is a store that keeps its deadlines, for storeBudget.
type keeper struct{ Store }

func (keeper) KeepsDeadlines() bool { return true }

// TestCallsByDeadlineShareTheirBudgetsEnd: calls of one budget that start
// within a tick share a context's deadline and Done, at most a tick past
// each one's budget, that ends at that deadline; a call that starts later
// gets the next cohort; a request that ended already, or ends before the
// cohort, gets a context of its own that ends with the request.
func TestCallsByDeadlineShareTheirBudgetsEnd(t *testing.T) {
	const d = 100 * time.Millisecond
	tick := min(d/64, maxTick)
	for _, tt := range []struct {
		name      string
		after     time.Duration // between the first call and the second
		shared    bool          // the second call has the first one's Done
		reqAfter  time.Duration // the request's own deadline, after the second call starts; 0: none
		cancelled bool          // the request ended before the second call
		wantEnd   time.Duration // the second call's deadline, after it starts
	}{
		{name: "calls at once share a cohort", after: 0, shared: true, wantEnd: d + tick},
		{name: "a call within the tick shares it", after: tick / 2, shared: true, wantEnd: d + tick/2},
		{name: "a call after the tick starts the next", after: tick + time.Microsecond, wantEnd: d + tick},
		{name: "a request deadline nearer than the budget is the call's", reqAfter: d / 2, wantEnd: d / 2},
		{name: "a request deadline past the cohort leaves it the cohort's", reqAfter: 2 * d, shared: true, wantEnd: d + tick},
		{name: "a request that ended has a context that ended", cancelled: true, wantEnd: d},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := storeBudget(d, keeper{})
				first, _ := b.bound(context.Background())
				time.Sleep(tt.after)
				ctx := context.Background()
				if tt.reqAfter > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.reqAfter)
					defer cancel()
				}
				if tt.cancelled {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					cancel()
				}
				start := time.Now()
				second, cancel := b.bound(ctx)
				defer cancel()
				if shared := second.Done() == first.Done(); shared != tt.shared {
					t.Errorf("the second call shares the first one's Done: %v, want %v", shared, tt.shared)
				}
				end, ok := second.Deadline()
				if !ok || end.Sub(start) != tt.wantEnd {
					t.Fatalf("the second call's deadline is %v after it starts (%v), want %v", end.Sub(start), ok, tt.wantEnd)
				}
				if tt.cancelled {
					if !errors.Is(second.Err(), context.Canceled) {
						t.Fatalf("the call of an ended request: Err %v, want Canceled", second.Err())
					}
					return
				}
				time.Sleep(time.Until(end) - time.Nanosecond)
				if second.Err() != nil {
					t.Fatalf("Err %v before the deadline", second.Err())
				}
				<-second.Done()
				if at := time.Now(); !at.Equal(end) || !errors.Is(second.Err(), context.DeadlineExceeded) {
					t.Fatalf("Done at %v after the deadline, Err %v; want at it, DeadlineExceeded", at.Sub(end), second.Err())
				}
			})
		})
	}
}

// TestAnErrorOfACallByDeadlineIsClassifiedByTheClock: a call that returns
// an error of its own once its cohort's end has passed, before the
// cohort's timer has run (a socket deadline fires as the timer does), is a
// timeout, or shed if it was never sent; an answer in time stands; a
// request that ended during the call gets its own error.
func TestAnErrorOfACallByDeadlineIsClassifiedByTheClock(t *testing.T) {
	errIO := errors.New("i/o timeout")
	for _, tt := range []struct {
		name    string
		err     error // what the call returns
		past    bool  // it returns once the cohort's end passed
		cancel  bool  // the request ends during the call
		wantErr error
	}{
		{name: "an error in time stands", err: errIO, wantErr: errIO},
		{name: "an answer in time stands"},
		{name: "an error past the end is a timeout", err: errIO, past: true, wantErr: ErrTimeout},
		{name: "an unsent call past the end is shed", err: ErrNotSent, past: true, wantErr: ErrNotSent},
		{name: "a request that ended gets its own error", err: errIO, cancel: true, wantErr: context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := storeBudget(100*time.Millisecond, keeper{})
				ctx, cancelReq := context.WithCancel(context.Background())
				defer cancelReq()
				bctx, cancel := b.bound(ctx)
				if tt.cancel {
					cancelReq()
				}
				if tt.past { // a cohort whose end passed, its timer yet to run
					bctx = &boundCtx{parent: ctx, c: &cohort{end: time.Now().Add(-time.Nanosecond), done: make(chan struct{})}}
				}
				_, err := ended(bctx, cancel, b, 7, tt.err, nil)
				if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
					t.Fatalf("ended = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == ErrTimeout && errors.Is(err, ErrNotSent) {
					t.Fatalf("ended = %v: a sent call is not shed", err)
				}
			})
		})
	}
}

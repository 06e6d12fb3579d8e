package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestATimerThatFiresLateIsStarvationNotTheStore: when the budget's timer
// fires well after the deadline, the process was starved of CPU: the
// request still gets the failure policy, but the breaker does not count it
// against the store; a timer on time counts.
func TestATimerThatFiresLateIsStarvationNotTheStore(t *testing.T) {
	for _, tt := range []struct {
		name        string
		late        time.Duration
		wantStarved bool
	}{
		{"timer on time", 0, false},
		{"timer a little late", 2 * time.Millisecond, false},
		{"timer late by half the budget", 5 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudget(10 * time.Millisecond)
			var calls atomic.Int64
			start := time.Now()
			b.now = func() time.Time {
				if calls.Add(1) == 1 {
					return start
				}
				return start.Add(b.d + tt.late) // when the timer's wake-up is seen
			}
			block := make(chan struct{})
			defer close(block)
			_, err := within(context.Background(), b, func(context.Context) (int, error) { <-block; return 0, nil })
			if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v, want an ErrTimeout that is a DeadlineExceeded", err)
			}
			if got := errors.Is(err, errStarved); got != tt.wantStarved {
				t.Fatalf("starved = %v (%v), want %v", got, err, tt.wantStarved)
			}
			l := &Limiter{breaker: NewBreaker(1, time.Minute), now: time.Now}
			if end := l.settle(context.Background(), err, false); end != storeFailed {
				t.Errorf("the request's end is %v, want storeFailed: the store did not decide", end)
			}
			wantState := BreakerOpen
			if tt.wantStarved {
				wantState = BreakerClosed
			}
			if s := l.breaker.State(); s != wantState {
				t.Errorf("breaker %v after the timeout, want %v", s, wantState)
			}
		})
	}
}

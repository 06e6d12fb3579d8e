package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWithinOrGivesBackWhatItDoesNotReturn: an answer within returns is
// the caller's; every other (late, or moot because the caller's context
// ended) goes to late exactly once, on another goroutine. A call on a
// goroutine of its own and a call by deadline, on the caller's, end alike.
func TestWithinOrGivesBackWhatItDoesNotReturn(t *testing.T) {
	for _, mode := range []callMode{onGoroutine, byDeadline} {
		t.Run(map[callMode]string{onGoroutine: "on a goroutine", byDeadline: "by deadline"}[mode], func(t *testing.T) {
			testWithinOr(t, mode)
		})
	}
}

func testWithinOr(t *testing.T, mode callMode) {
	errStore := errors.New("store failed")
	for _, tt := range []struct {
		name     string
		answerAt time.Duration // when the call answers
		err      error         // what it answers with
		cancelAt time.Duration // when the caller's context is cancelled; 0: never
		queued   bool          // the call waits in the store's queue until its context ends
		wantV    int
		wantErr  error
		wantLate []int // the answers late got
	}{
		{name: "an answer in time is returned", answerAt: 10 * time.Millisecond, wantV: 7},
		{name: "a failure in time is returned", answerAt: 10 * time.Millisecond, err: errStore, wantErr: errStore},
		{name: "an answer after the budget goes to late", answerAt: time.Second, wantErr: ErrTimeout, wantLate: []int{7}},
		{name: "a failure after the budget goes to late too", answerAt: time.Second, err: errStore, wantErr: ErrTimeout, wantLate: []int{7}},
		{name: "an answer after the caller left goes to late", answerAt: 30 * time.Millisecond, cancelAt: 20 * time.Millisecond,
			wantErr: context.Canceled, wantLate: []int{7}},
		{name: "a call queued for the whole budget is not sent", queued: true, wantErr: ErrNotSent, wantLate: []int{7}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				var mu sync.Mutex
				var late []int
				b := newBudget(100 * time.Millisecond)
				b.mode = mode
				v, err := withinOr(ctx, b, func(ctx context.Context) (int, error) {
					if tt.queued { // as store/redis's group commit
						Queued(ctx)
						<-ctx.Done()
						return 7, fmt.Errorf("queued: %w: %w", ErrNotSent, ctx.Err())
					}
					time.Sleep(tt.answerAt) // the store's time, in the bubble
					return 7, tt.err
				}, func(v int, _ error) {
					mu.Lock()
					late = append(late, v)
					mu.Unlock()
				})
				if tt.wantErr == nil && (err != nil || v != tt.wantV) || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("withinOr = %d, %v; want %d, %v", v, err, tt.wantV, tt.wantErr)
				}
				time.Sleep(2 * time.Second) // every call answered, in the bubble
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(late, tt.wantLate) {
					t.Fatalf("late got %v, want %v", late, tt.wantLate)
				}
			})
		})
	}
}

// TestGuardSettleTellsTheBreaker: a store failure counts against the
// breaker, an answer resets it, a refused call and an ended request do
// neither; enter then keeps calls from an open breaker's store.
func TestGuardSettleTellsTheBreaker(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g := guard{breaker: NewBreaker(2, time.Minute), now: func() time.Time { return now }, budget: newBudget(time.Hour)}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	short, cancelShort := context.WithTimeout(context.Background(), time.Hour/2) // within the budget below
	defer cancelShort()
	for _, step := range []struct {
		ctx  context.Context
		err  error
		want callEnd
	}{
		{context.Background(), errors.New("down"), storeFailed},
		{context.Background(), nil, answered}, // resets the count
		{context.Background(), errors.New("down"), storeFailed},
		{context.Background(), ErrInvalidCost, refused},
		{ended, context.Canceled, requestEnded},
		// not sent, as its own deadline (before the budget's end) would
		// pass while queued: the request's end, not the store's failure
		{short, fmt.Errorf("queue: %w", ErrNotSent), requestEnded},
	} {
		if _, err := g.enter(); err != nil {
			t.Fatalf("enter: %v before the breaker opened", err)
		}
		if got := g.settle(step.ctx, step.err, false); got != step.want {
			t.Fatalf("settle(%v) = %d, want %d", step.err, got, step.want)
		}
	}
	g.settle(context.Background(), errors.New("down"), false) // the second in a row
	if _, err := g.enter(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("enter after 2 failures in a row: %v, want ErrBreakerOpen", err)
	}
}

// TestAnAnswerIsNotedOnceATick: the time of the store's last answer is
// written once it is a tick out of date, not by every answer, and so is
// never more than a tick early.
func TestAnAnswerIsNotedOnceATick(t *testing.T) {
	const budget = 100 * time.Millisecond
	tick := min(budget/64, maxTick)
	t0 := time.Unix(1_700_000_000, 0)
	for _, tt := range []struct {
		name    string
		answers []time.Duration // when the store answers, after t0
		want    time.Duration   // the last answer noted, after t0
	}{
		{"the first answer is noted", []time.Duration{0}, 0},
		{"an answer within the tick is not", []time.Duration{0, tick / 2}, 0},
		{"an answer a tick later is", []time.Duration{0, tick / 2, tick}, tick},
		{"each answer a tick apart is", []time.Duration{0, tick, 3 * tick}, 3 * tick},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var now time.Time
			g := &guard{budget: newBudget(budget), now: func() time.Time { return now }, track: true}
			for _, at := range tt.answers {
				now = t0.Add(at)
				g.settle(context.Background(), nil, false)
			}
			if got := time.Duration(g.lastAnswer.Load() - t0.UnixNano()); got != tt.want {
				t.Fatalf("last answer noted %v after t0, want %v", got, tt.want)
			}
			if now.UnixNano()-g.lastAnswer.Load() >= int64(tick) {
				t.Fatalf("the last answer noted is a tick or more before the last answer")
			}
		})
	}
}

// TestAnswersOfACohortReadTheClockOnce: on a budget of calls by deadline,
// the answers given while one cohort is the budget's current read the
// clock for the first of them only; the first answer in the next cohort
// reads it again, and is noted.
func TestAnswersOfACohortReadTheClockOnce(t *testing.T) {
	b := newBudget(100 * time.Millisecond)
	b.mode = byDeadline
	reads := 0
	now := time.Unix(1_700_000_000, 0)
	g := &guard{budget: b, track: true, now: func() time.Time { reads++; return now }}
	first := &cohort{end: time.Now().Add(time.Second), done: make(chan struct{})}
	b.cohort.Store(first)
	for range 5 {
		g.settle(context.Background(), nil, false)
	}
	if reads != 1 || g.lastAnswer.Load() != now.UnixNano() {
		t.Fatalf("%d clock reads for five answers in one cohort (last answer %d), want 1 (%d)", reads, g.lastAnswer.Load(), now.UnixNano())
	}
	now = now.Add(time.Millisecond) // a tick later: a new cohort
	b.cohort.Store(&cohort{end: time.Now().Add(time.Second), done: make(chan struct{})})
	g.settle(context.Background(), nil, false)
	g.settle(context.Background(), nil, false)
	if reads != 2 || g.lastAnswer.Load() != now.UnixNano() {
		t.Fatalf("%d clock reads after the next cohort's answers (last answer %d), want 2 (%d)", reads, g.lastAnswer.Load(), now.UnixNano())
	}
}

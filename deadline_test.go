package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// goid returns the id of the calling goroutine, from its stack's header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// goroutineStore records the goroutine and the context deadline of its
// last call; keeps is what its KeepsDeadlines reports, local its Local.
type goroutineStore struct {
	ratelimit.Store
	keeps, local bool
	g            uint64
	deadline     time.Time
	hasDeadline  bool
}

func (s *goroutineStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.g = goid()
	s.deadline, s.hasDeadline = ctx.Deadline()
	return s.Store.AllowN(ctx, key, l, n)
}

func (s *goroutineStore) KeepsDeadlines() bool { return s.keeps }
func (s *goroutineStore) Local() bool          { return s.local }

// TestStoresThatCannotOverstayAreCalledOnTheCallersGoroutine: a store that
// keeps its context's deadline is called on the caller's goroutine with
// the budget as that deadline, and a Local store as it is; only a store
// that says neither is called on a goroutine of its own.
func TestStoresThatCannotOverstayAreCalledOnTheCallersGoroutine(t *testing.T) {
	const budget = time.Minute
	for _, tt := range []struct {
		name         string
		keeps, local bool
		wantSame     bool // called on the caller's goroutine
		wantDeadline bool // with the budget as its context's deadline
	}{
		{"a store that keeps deadlines", true, false, true, true},
		{"a Local store", false, true, true, false},
		{"a store that says neither", false, false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			s := &goroutineStore{Store: mem, keeps: tt.keeps, local: tt.local}
			l := newLimiter(t, s, ratelimit.PerMinute(10), ratelimit.WithTimeout(budget))
			start := time.Now()
			if _, err := l.Allow(context.Background(), "ip:192.0.2.1"); err != nil {
				t.Fatal(err)
			}
			if same := s.g == goid(); same != tt.wantSame {
				t.Errorf("called on the caller's goroutine: %v, want %v", same, tt.wantSame)
			}
			if s.hasDeadline != tt.wantDeadline {
				t.Fatalf("the store's context has a deadline: %v, want %v", s.hasDeadline, tt.wantDeadline)
			}
			if d := s.deadline.Sub(start); tt.wantDeadline && (d < budget-time.Second || d > budget+time.Second) {
				t.Errorf("the store's deadline is %v after the call, want the budget, %v", d, budget)
			}
		})
	}
}

// TestAHangingStoreThatKeepsDeadlinesTimesOut: a store that keeps its
// deadlines and never answers is a timeout at the budget, as on a
// goroutine of its own: ErrTimeout, counted by the breaker, the failure
// policy's answer.
func TestAHangingStoreThatKeepsDeadlinesTimesOut(t *testing.T) {
	s := &hangingKeeper{}
	b := ratelimit.NewBreaker(1, time.Hour)
	l := newLimiter(t, s, ratelimit.PerMinute(10), ratelimit.WithTimeout(10*time.Millisecond),
		ratelimit.WithBreaker(b), ratelimit.WithFailClosed(), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	res, err := l.Allow(context.Background(), "ip:192.0.2.1")
	if res.Allowed || !errors.Is(err, ratelimit.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ratelimit.ErrNotSent) {
		t.Fatalf("Allow = %+v, %v; want denied by the failure policy, an ErrTimeout of a sent call", res, err)
	}
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v after the timeout, want open", b.State())
	}
}

// hangingKeeper is a shared store that keeps its deadlines and never
// answers: it returns when its context ends.
type hangingKeeper struct{}

func (hangingKeeper) AllowN(ctx context.Context, _ string, _ ratelimit.Limit, _ int) (ratelimit.Result, error) {
	<-ctx.Done()
	return ratelimit.Result{}, ctx.Err()
}

func (hangingKeeper) KeepsDeadlines() bool { return true }

// queueingKeeper is a shared store that keeps its deadlines and queues
// every decision, as store/redis's group commit does when its senders are
// busy: onQueued runs while it waits, and the decision is sent only if
// [ratelimit.Sending] says so.
type queueingKeeper struct {
	ratelimit.Store
	onQueued func()
	sent     bool
}

func (s *queueingKeeper) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	ratelimit.Queued(ctx)
	s.onQueued()
	if !ratelimit.Sending(ctx) {
		return ratelimit.Result{}, fmt.Errorf("queued: %w", ratelimit.ErrNotSent)
	}
	s.sent = true
	return s.Store.AllowN(ctx, key, l, n)
}

func (*queueingKeeper) KeepsDeadlines() bool { return true }

// TestAQueuedDecisionOfAGoneRequestIsNotSent: a store that keeps deadlines
// holds a decision queued while its request ends (the client went away):
// Sending tells it not to send it, and the request gets its own error,
// without the error handler or the breaker hearing of it. A decision
// whose request goes on is sent.
func TestAQueuedDecisionOfAGoneRequestIsNotSent(t *testing.T) {
	for _, tt := range []struct {
		name     string
		leaves   bool // the request ends while its decision is queued
		wantSent bool
	}{
		{"a request that goes on is sent", false, true},
		{"a request that ended is not", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := &queueingKeeper{Store: mem, onQueued: func() {
				if tt.leaves {
					cancel()
				}
			}}
			var told int
			b := ratelimit.NewBreaker(1, time.Hour)
			l := newLimiter(t, s, ratelimit.PerMinute(10), ratelimit.WithTimeout(time.Minute), ratelimit.WithBreaker(b),
				ratelimit.WithErrorHandler(func(*http.Request, error) { told++ }))
			res, err := l.Allow(ctx, "ip:192.0.2.1")
			if s.sent != tt.wantSent {
				t.Fatalf("sent: %v, want %v", s.sent, tt.wantSent)
			}
			if tt.leaves && (!errors.Is(err, context.Canceled) || res.Allowed) || !tt.leaves && (err != nil || !res.Allowed) {
				t.Fatalf("Allow = %+v, %v", res, err)
			}
			if told != 0 || b.State() != ratelimit.BreakerClosed {
				t.Fatalf("error handler told %d times, breaker %v; want 0 and closed", told, b.State())
			}
		})
	}
}

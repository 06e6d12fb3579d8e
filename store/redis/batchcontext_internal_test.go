package redisstore

import (
	"context"
	"testing"
	"time"
)

// sharedEnd is a context like a limiter's cohort: its own Done channel
// and deadline, shared by the calls that hold it.
type sharedEnd struct {
	context.Context
	end  time.Time
	done chan struct{}
}

func (c sharedEnd) Deadline() (time.Time, bool) { return c.end, true }
func (c sharedEnd) Done() <-chan struct{}       { return c.done }

// TestBatchContext: the context of a batch's call never ends before any
// of its decisions' deadlines, is never cancelled by one caller, and is
// the first decision's own, without a timer, only when every decision's
// context ends together with it.
func TestBatchContext(t *testing.T) {
	now := time.Now()
	end := now.Add(time.Minute)
	shared := sharedEnd{Context: context.Background(), end: end, done: make(chan struct{})}
	other := sharedEnd{Context: context.Background(), end: end, done: make(chan struct{})}
	later := sharedEnd{Context: context.Background(), end: end.Add(time.Second), done: shared.done}
	cancelled, cancel := context.WithDeadline(context.Background(), end)
	cancel()
	batch := func(ctxs ...context.Context) []*pending {
		var b []*pending
		for _, c := range ctxs {
			b = append(b, &pending{ctx: c})
		}
		return b
	}
	for _, tt := range []struct {
		name      string
		batch     []*pending
		asIs      bool      // the first decision's context, as it is
		deadline  time.Time // zero: none
		cancelled bool
	}{
		{"one decision", batch(shared), true, end, false},
		{"one Done channel and one deadline", batch(shared, shared, shared), true, end, false},
		{"two Done channels", batch(shared, other), false, end, false},
		{"one Done channel, two deadlines", batch(shared, later), false, end.Add(time.Second), false},
		{"a cancelled caller among others", batch(cancelled, shared), false, end, false},
		{"a decision without a deadline", batch(shared, context.Background()), false, time.Time{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := batchContext(tt.batch)
			if cancel != nil {
				defer cancel()
			}
			if got := ctx == tt.batch[0].ctx && cancel == nil; got != tt.asIs {
				t.Fatalf("the first decision's own context: %v, want %v", got, tt.asIs)
			}
			d, ok := ctx.Deadline()
			if ok != !tt.deadline.IsZero() || ok && !d.Equal(tt.deadline) {
				t.Fatalf("deadline %v, %v; want %v", d, ok, tt.deadline)
			}
			if got := ctx.Err() != nil; got != tt.cancelled {
				t.Fatalf("ended: %v (%v), want %v", got, ctx.Err(), tt.cancelled)
			}
		})
	}
}

// TestDeadlineArgIsMadeOnce: the calls that share a deadline (a limiter's
// cohort) share its argument, without an allocation each, and a call of
// another deadline gets its own.
func TestDeadlineArgIsMadeOnce(t *testing.T) {
	s := &Store{}
	s.skew.set(time.Now().UnixMicro()+5, time.Now())
	end := time.Now().Add(time.Second)
	done := make(chan struct{})
	var ctx context.Context = sharedEnd{Context: context.Background(), end: end, done: done}
	first := s.deadlineArg(ctx)
	want, _ := s.skew.deadline(end)
	if first != any(want) {
		t.Fatalf("deadlineArg = %v, want %d", first, want)
	}
	if n := testing.AllocsPerRun(100, func() { s.deadlineArg(ctx) }); n != 0 {
		t.Fatalf("%v allocations for a deadline made already", n)
	}
	next := sharedEnd{Context: context.Background(), end: end.Add(time.Millisecond), done: done}
	if got, want := s.deadlineArg(next), first.(int64)+1000; got != any(want) {
		t.Fatalf("deadlineArg of a later deadline = %v, want %d", got, want)
	}
}

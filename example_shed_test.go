package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// busyStore queues every decision behind calls in flight that never end,
// as a store whose senders are all busy does: a decision leaves the queue
// when next has a turn for it, or when its context ends.
type busyStore struct{ next chan struct{} }

func (s busyStore) AllowN(ctx context.Context, _ string, l ratelimit.Limit, _ int) (ratelimit.Result, error) {
	ratelimit.Queued(ctx) // waiting in the queue, not sent
	select {
	case <-s.next:
		if !ratelimit.Sending(ctx) { // the limiter gave up on it: never send it
			return ratelimit.Result{}, fmt.Errorf("busystore: %w", ratelimit.ErrNotSent)
		}
		return ratelimit.Result{Allowed: true, Limit: l}, nil // sent and answered
	case <-ctx.Done():
		return ratelimit.Result{}, fmt.Errorf("busystore: %w: %w", ratelimit.ErrNotSent, ctx.Err())
	}
}

func ExampleSending() {
	var shed error
	// The default budget, 100 ms, for the call to reach the queue.
	l, _ := ratelimit.New(busyStore{next: make(chan struct{})}, ratelimit.PerMinute(10),
		ratelimit.WithPlainKeys(), ratelimit.WithErrorHandler(func(_ *http.Request, err error) { shed = err }))
	res, _ := l.Allow(context.Background(), "k")
	fmt.Println(res.Allowed, errors.Is(shed, ratelimit.ErrNotSent), l.Breaker().State())
	// Output:
	// true true closed
}

func ExampleQueued() {
	// A decision the store holds queued past its budget is answered by the
	// failure policy (here the local fallback, which allows 10 a minute).
	// It counts against the store only while the store answers nothing at
	// all, as this one: then the queue is stuck, and the breaker opens
	// after its 5 failures.
	l, _ := ratelimit.New(busyStore{next: make(chan struct{})}, ratelimit.PerMinute(10), ratelimit.WithTimeout(10*time.Millisecond),
		ratelimit.WithPlainKeys(), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	allowed := 0
	for range 12 {
		if res, _ := l.Allow(context.Background(), "k"); res.Allowed {
			allowed++
		}
	}
	fmt.Println(allowed, l.Breaker().State())
	// Output:
	// 10 open
}

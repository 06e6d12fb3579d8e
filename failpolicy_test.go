package ratelimit_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestDefaultFailurePolicy: on a store that is not Local and fails, a
// limiter without a failure option decides with a local fallback (its
// share with WithInstances); it fails open or closed only when asked.
func TestDefaultFailurePolicy(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	for _, tc := range []struct {
		name    string
		opts    []ratelimit.Option
		allowed int // of 10 requests of one key at PerMinute(4)
		err     bool
	}{
		{"by default the local fallback holds the limit", nil, 4, false},
		{"WithInstances(2) holds each server to half", []ratelimit.Option{ratelimit.WithInstances(2)}, 2, false},
		{"WithFallback(store, 4) holds each server to a quarter", []ratelimit.Option{ratelimit.WithFallback(mem, 4)}, 1, false},
		{"WithFailOpen lets every request through", []ratelimit.Option{ratelimit.WithFailOpen()}, 10, false},
		{"WithFailClosed refuses every request", []ratelimit.Option{ratelimit.WithFailClosed()}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]ratelimit.Option{ratelimit.WithPlainKeys(), ratelimit.WithErrorHandler(func(*http.Request, error) {})}, tc.opts...)
			l, err := ratelimit.New(downStore{}, ratelimit.PerMinute(4), opts...)
			if err != nil {
				t.Fatal(err)
			}
			allowed := 0
			for range 10 {
				res, err := l.Allow(context.Background(), "k")
				if err == nil {
					t.Fatal("a failing store: want its error told")
				}
				if res.Allowed {
					allowed++
				}
			}
			if allowed != tc.allowed {
				t.Fatalf("%d of 10 allowed, want %d", allowed, tc.allowed)
			}
		})
	}
}

// TestFailureOptionsThatCannotWork: conflicting failure options are errors
// of New.
func TestFailureOptionsThatCannotWork(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	for _, tc := range []struct {
		name  string
		store ratelimit.Store
		opts  []ratelimit.Option
	}{
		{"open and closed", downStore{}, []ratelimit.Option{ratelimit.WithFailOpen(), ratelimit.WithFailClosed()}},
		{"closed and open", downStore{}, []ratelimit.Option{ratelimit.WithFailClosed(), ratelimit.WithFailOpen()}},
		{"zero instances", downStore{}, []ratelimit.Option{ratelimit.WithInstances(0)}},
		{"instances that disagree with the fallback's", downStore{}, []ratelimit.Option{ratelimit.WithInstances(2), ratelimit.WithFallback(mem, 3)}},
		{"instances with no fallback to size", downStore{}, []ratelimit.Option{ratelimit.WithInstances(2), ratelimit.WithFailOpen()}},
		{"instances on a Local store", mem, []ratelimit.Option{ratelimit.WithInstances(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ratelimit.New(tc.store, ratelimit.PerMinute(4), tc.opts...); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
}

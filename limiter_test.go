package ratelimit_test

import (
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestNewRefusesBadConfiguration(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	tests := []struct {
		name  string
		store ratelimit.Store
		limit ratelimit.Limit
		opts  []ratelimit.Option
	}{
		{"nil store", nil, ratelimit.PerSecond(1), nil},
		{"invalid limit", mem, ratelimit.Limit{}, nil},
		{"nil key func", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithKeyFunc(nil)}},
		{"nil cost", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithCost(nil)}},
		{"nil deny handler", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithDenyHandler(nil)}},
		{"nil error handler", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithErrorHandler(nil)}},
		{"nil skip", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithSkip(nil)}},
		{"empty name", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithName("")}},
		{"name with a quote", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithName(`a"b`)}},
		{"unknown header style", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithHeaders(99)}},
		{"a breaker of no failures", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithBreaker(ratelimit.NewBreaker(0, time.Second))}},
		{"a breaker of no cool-down", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithBreaker(ratelimit.NewBreaker(1, 0))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if l, err := ratelimit.New(tt.store, tt.limit, tt.opts...); err == nil || l != nil {
				t.Fatalf("New = %v, %v; want an error", l, err)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Middleware with an invalid limit did not panic")
		}
	}()
	ratelimit.Middleware(mem, ratelimit.Limit{})
}

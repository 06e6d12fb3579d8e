package ratelimit_test

import (
	"context"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit"
)

// remoteStore wraps a store as a remote one would behave: not Local (so a
// limiter gives it a time budget, a breaker and a deny cache), checking
// its arguments first and then its context, as the Redis store and
// go-redis do, and failing while down. It counts the calls that reach it.
type remoteStore struct {
	ratelimit.Store
	down  atomic.Bool
	calls atomic.Int64
}

func (s *remoteStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	if err := ratelimit.ValidateCall(key, l, n); err != nil {
		return ratelimit.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	if s.down.Load() {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

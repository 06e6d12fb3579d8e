package echolimit

import (
	"context"

	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
)

// RateLimiterStore lets Echo's own middleware.RateLimiter decide through a
// [ratelimit.Limiter], and so with its store (such as Redis), policies,
// time budget, circuit breaker, deny cache and failure policy. Give the
// RateLimiter [IdentifierByIP] as its IdentifierExtractor: its default,
// c.RealIP(), believes X-Forwarded-For from any client.
//
//	limiter, err := ratelimit.New(store, ratelimit.PerMinute(100), ratelimit.WithName("echo"))
//	...
//	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
//		Store:               echolimit.NewRateLimiterStore(limiter),
//		IdentifierExtractor: echolimit.IdentifierByIP(),
//	}))
//
// Echo's interface has no context and no headers; prefer [Middleware] where
// you can.
type RateLimiterStore struct {
	limiter *ratelimit.Limiter
}

var _ middleware.RateLimiterStore = (*RateLimiterStore)(nil)

// NewRateLimiterStore returns a RateLimiterStore that decides one token per
// request through l ([ratelimit.Limiter.Allow]). Policies of l with a
// KeyFunc of their own need a request, which Echo's interface does not
// give: use [Middleware] for those. On a shared store such as Redis, give
// l [ratelimit.WithKeySecret] (identifiers, such as API keys, then reach
// the store as a keyed hash) or [ratelimit.WithPlainKeys] (they are
// addresses, or no secret): without either, Allow fails with
// an error wrapping [ratelimit.ErrBadConfig]. It panics on a nil l, at start-up rather
// than on the first request, as Middleware does.
func NewRateLimiterStore(l *ratelimit.Limiter) *RateLimiterStore {
	if l == nil {
		panic("ratelimit/adapters/echo: NewRateLimiterStore(nil)")
	}
	return &RateLimiterStore{limiter: l}
}

// Allow implements middleware.RateLimiterStore: it takes one token from
// identifier's budget, under the key "echo:" + identifier in the limiter's
// namespace (hashed, as the limiter hashes long keys, so that no
// identifier a client chooses can grow the store's keys). An empty
// identifier is no error: all such requests share one budget, as they
// share one in Echo's own memory store. The decision has the limiter's
// time budget, even though Echo gives no context: a Redis that hangs costs
// a request the budget, not the client's timeouts. When the store fails,
// the limiter's failure policy answers: true failing open or from the
// fallback store, false with the store's error failing closed; Echo's
// RateLimiter denies a request whose Allow reports false.
func (s *RateLimiterStore) Allow(identifier string) (bool, error) {
	res, err := s.limiter.Allow(context.Background(), "echo:"+identifier)
	if res.Allowed {
		return true, nil
	}
	return false, err
}

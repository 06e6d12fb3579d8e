package echolimit

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
)

// RateLimiterStore lets Echo's own middleware.RateLimiter decide through a
// [ratelimit.Limiter], and so with its store (such as Redis), policies,
// time budget, circuit breaker, deny cache and failure policy. Give the
// RateLimiter [IdentifierByIP] as its IdentifierExtractor, to key on the
// client's address as the limiter does: the connection's, unless trusted
// proxies are named.
//
//	limiter, err := ratelimit.New(store, ratelimit.PerMinute(100), ratelimit.WithName("echo"))
//	...
//	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
//		Store:               echolimit.NewRateLimiterStore(limiter),
//		IdentifierExtractor: echolimit.IdentifierByIP(),
//	}))
//
// It implements middleware.RateLimiterStoreContext, so the RateLimiter
// passes it the request, whose context reaches the store and whose response
// gets the limiter's rate-limit headers. [Middleware] offers the limiter's
// other options too (cost, header styles, the deny handler).
type RateLimiterStore struct {
	limiter *ratelimit.Limiter
}

var (
	_ middleware.RateLimiterStore        = (*RateLimiterStore)(nil)
	_ middleware.RateLimiterStoreContext = (*RateLimiterStore)(nil)
)

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
		panic("ratelimit/adapters/echov5: NewRateLimiterStore(nil)")
	}
	return &RateLimiterStore{limiter: l}
}

// Allow implements middleware.RateLimiterStore: it takes one token from
// identifier's budget, under the key "echo:" + identifier in the limiter's
// namespace (hashed, as the limiter hashes long keys, so that no
// identifier a client chooses can grow the store's keys). An empty
// identifier is no error: all such requests share one budget, as they
// share one in Echo's own memory store. The decision has the limiter's
// time budget. When the store fails, the limiter's failure policy answers:
// true failing open or from the fallback store, false with the store's
// error failing closed; Echo's RateLimiter denies a request whose Allow
// reports false. It is AllowContext without a request.
func (s *RateLimiterStore) Allow(identifier string) (bool, error) {
	return s.allow(context.Background(), identifier, nil)
}

// AllowContext implements middleware.RateLimiterStoreContext: it is Allow
// under the request's context (a decision ends when the client goes away,
// or within the limiter's time budget), and once decided it sets the
// limiter's rate-limit headers on the response, with Retry-After on a
// denial, as [ratelimit.Limiter.AdmitKey] sets them.
func (s *RateLimiterStore) AllowContext(c *echo.Context, identifier string) (bool, error) {
	return s.allow(c.Request().Context(), identifier, c)
}

func (s *RateLimiterStore) allow(ctx context.Context, identifier string, c *echo.Context) (bool, error) {
	key := "echo:" + identifier
	if c == nil {
		res, err := s.limiter.Allow(ctx, key)
		if res.Allowed {
			return true, nil
		}
		return false, err
	}
	ok, status := s.limiter.AdmitKey(ctx, key, c.Response().Header())
	if ok || status == http.StatusTooManyRequests {
		return ok, nil
	}
	// The store failed and the limiter fails closed, or a bad configuration:
	// the limiter's error handler was told why.
	return false, fmt.Errorf("ratelimit: the limiter answers %d %s", status, http.StatusText(status))
}

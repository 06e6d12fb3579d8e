package echo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
)

// RateLimiterStore lets Echo's own middleware.RateLimiter keep its budgets
// in any [ratelimit.Store], such as Redis. Give the RateLimiter
// [IdentifierByIP] as its IdentifierExtractor, to key on the client's
// address as the limiter does: the connection's, unless trusted proxies
// are named.
//
//	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
//		Store:               echolimit.NewRateLimiterStore(store, ratelimit.PerMinute(100)),
//		IdentifierExtractor: echolimit.IdentifierByIP(),
//	}))
//
// It implements middleware.RateLimiterStoreContext, so the RateLimiter
// passes it the request, whose context reaches the store and whose response
// gets the rate-limit headers. [Middleware] offers the limiter's other
// options too (cost, failure policy, header styles).
type RateLimiterStore struct {
	store ratelimit.Store
	limit ratelimit.Limit
}

var (
	_ middleware.RateLimiterStore        = (*RateLimiterStore)(nil)
	_ middleware.RateLimiterStoreContext = (*RateLimiterStore)(nil)
)

var errNilStore = errors.New("ratelimit/adapters/echov5: RateLimiterStore with a nil store")

// NewRateLimiterStore returns a RateLimiterStore that takes one token per
// request from store under limit.
func NewRateLimiterStore(store ratelimit.Store, limit ratelimit.Limit) *RateLimiterStore {
	return &RateLimiterStore{store: store, limit: limit}
}

// Allow implements middleware.RateLimiterStore: it takes one token from
// identifier's budget, kept in the store under the key "echo:" +
// identifier, or "sha256:" and the hex SHA-256 of that key where it would
// be longer than [ratelimit.MaxKeyLen], so that no identifier a client
// chooses can grow the store's keys. An empty identifier is no error: all
// such requests share one budget, under the key "echo:", as they share one
// in Echo's own memory store. Its errors are the store's (and
// ErrInvalidLimit for a bad limit); Echo's RateLimiter denies a request
// whose Allow fails. It is AllowContext without a request.
func (s *RateLimiterStore) Allow(identifier string) (bool, error) {
	res, err := s.allow(context.Background(), identifier)
	return res.Allowed, err
}

// AllowContext implements middleware.RateLimiterStoreContext: it is Allow
// under the request's context (a store call ends when the client goes
// away), and once decided it sets X-RateLimit-Limit, X-RateLimit-Remaining
// and X-RateLimit-Reset on the response, and Retry-After on a denial, as
// the limiter does.
func (s *RateLimiterStore) AllowContext(c *echo.Context, identifier string) (bool, error) {
	res, err := s.allow(c.Request().Context(), identifier)
	if err != nil {
		return false, err
	}
	h := c.Response().Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.limit.Capacity()))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilSeconds(res.ResetAfter), 10))
	if !res.Allowed {
		h.Set(echo.HeaderRetryAfter, strconv.FormatInt(max(1, ceilSeconds(res.RetryAfter)), 10))
	}
	return res.Allowed, nil
}

func (s *RateLimiterStore) allow(ctx context.Context, identifier string) (ratelimit.Result, error) {
	if s.store == nil {
		return ratelimit.Result{}, errNilStore
	}
	return s.store.AllowN(ctx, storeKey(identifier), s.limit, 1)
}

// storeKey namespaces an Echo identifier and bounds its length as the
// limiter bounds its own keys.
func storeKey(identifier string) string {
	key := "echo:" + identifier
	if len(key) <= ratelimit.MaxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ceilSeconds returns d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

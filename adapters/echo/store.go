package echo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
)

// RateLimiterStore lets Echo's own middleware.RateLimiter keep its budgets
// in any [ratelimit.Store], such as Redis. Give the RateLimiter
// [IdentifierByIP] as its IdentifierExtractor: its default, c.RealIP(),
// believes X-Forwarded-For from any client.
//
//	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
//		Store:               echolimit.NewRateLimiterStore(store, ratelimit.PerMinute(100)),
//		IdentifierExtractor: echolimit.IdentifierByIP(),
//	}))
//
// Echo's interface has no context and no headers; prefer [Middleware] where
// you can.
type RateLimiterStore struct {
	store ratelimit.Store
	limit ratelimit.Limit
}

var _ middleware.RateLimiterStore = (*RateLimiterStore)(nil)

var errNilStore = errors.New("ratelimit/adapters/echo: RateLimiterStore with a nil store")

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
// whose Allow fails.
func (s *RateLimiterStore) Allow(identifier string) (bool, error) {
	if s.store == nil {
		return false, errNilStore
	}
	res, err := s.store.AllowN(context.Background(), storeKey(identifier), s.limit, 1)
	return res.Allowed, err
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

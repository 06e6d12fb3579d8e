package echolimit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echo"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// from returns a request for path from the connection address remote, with
// X-Forwarded-For set to xff unless it is empty.
func from(path, remote, xff string) func() *http.Request {
	return func() *http.Request {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		return r
	}
}

func TestKeys(t *testing.T) {
	const client, proxy = "203.0.113.9:4711", "10.0.0.1:4711"
	limiter := func(t *testing.T, key middleware.Extractor) echo.MiddlewareFunc {
		l, _ := ratelimit.New(newStore(t), ratelimit.PerHour(2))
		return echolimit.Middleware(l, echolimit.KeyFromContext(key))
	}
	bridge := func(t *testing.T, key middleware.Extractor) echo.MiddlewareFunc {
		return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
			Store:               bridge(t, newStore(t), ratelimit.PerHour(2)),
			IdentifierExtractor: key,
		})
	}
	for _, tc := range []struct {
		name  string
		mw    func(*testing.T, middleware.Extractor) echo.MiddlewareFunc
		key   middleware.Extractor
		reqs  []func() *http.Request
		codes []int
	}{
		{"the route key gives every id of a route one budget", limiter, echolimit.KeyByRoute(),
			[]func() *http.Request{plain("/items/1"), plain("/items/2"), plain("/items/3"), plain("/other")},
			[]int{200, 200, 429, 200}},
		{"unmatched paths share one budget", limiter, echolimit.KeyByRoute(),
			[]func() *http.Request{plain("/a"), plain("/b"), plain("/c")},
			[]int{404, 404, 429}},
		{"the route key works in echo's own limiter", bridge, echolimit.KeyByRoute(),
			[]func() *http.Request{plain("/items/1"), plain("/items/2"), plain("/items/3")},
			[]int{200, 200, 429}},
		{"route and address composed give each client a budget per route", limiter,
			echolimit.Compose(echolimit.KeyByRoute(), echolimit.IdentifierByIP()),
			[]func() *http.Request{
				from("/items/1", client, ""), from("/items/2", client, ""), from("/items/3", client, ""),
				from("/items/1", "198.51.100.1:1", ""), from("/other", client, ""),
			},
			[]int{200, 200, 429, 200, 200}},
		{"a forged X-Forwarded-For does not buy a new budget", bridge, echolimit.IdentifierByIP(),
			[]func() *http.Request{
				from("/", client, "192.0.2.1"), from("/", client, "192.0.2.2"), from("/", client, "192.0.2.3"),
				from("/", "198.51.100.1:1", "192.0.2.3"),
			},
			[]int{200, 200, 429, 200}},
		{"X-Forwarded-For is believed from a trusted proxy", bridge,
			echolimit.IdentifierByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))),
			[]func() *http.Request{
				from("/", proxy, "192.0.2.1"), from("/", proxy, "192.0.2.1"), from("/", proxy, "192.0.2.1"),
				from("/", proxy, "192.0.2.2"),
			},
			[]int{200, 200, 429, 200}},
		{"requests without an identifier share one budget", bridge,
			func(echo.Context) (string, error) { return "", nil },
			[]func() *http.Request{plain("/"), plain("/"), plain("/")},
			[]int{200, 200, 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			e.Use(tc.mw(t, tc.key))
			ok := func(c echo.Context) error { return c.String(200, "ok") }
			e.GET("/", ok)
			e.GET("/items/:id", ok)
			e.GET("/other", ok)
			if got := codes(e, tc.reqs...); !slices.Equal(got, tc.codes) {
				t.Fatalf("codes %v, want %v", got, tc.codes)
			}
		})
	}
}

// keyStore records the keys it is asked for.
type keyStore struct {
	ratelimit.Store
	mu   sync.Mutex
	keys []string
}

func (s *keyStore) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	return s.Store.AllowN(ctx, key, limit, n)
}

func TestRateLimiterStoreKeys(t *testing.T) {
	long := strings.Repeat("a", 65_536)
	for _, tc := range []struct {
		name, identifier, key string
	}{
		// The limiter, named "echo", keeps the identifiers in its namespace;
		// the client part, "echo:" + the identifier, is bounded on its own.
		{"an identifier is namespaced", "203.0.113.7", "echo/echo:203.0.113.7"},
		{"an empty identifier has the one fixed key", "", "echo/echo:"},
		{"a client part of MaxKeyLen bytes is kept", strings.Repeat("a", ratelimit.MaxKeyLen-len("echo:")), "echo/echo:" + strings.Repeat("a", ratelimit.MaxKeyLen-len("echo:"))},
		{"a longer one is hashed", strings.Repeat("a", ratelimit.MaxKeyLen-len("echo:")+1), "echo/sha256:" + hexSHA256("echo:"+strings.Repeat("a", ratelimit.MaxKeyLen-len("echo:")+1))},
		{"a 64 KiB identifier is hashed", long, "echo/sha256:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &keyStore{Store: newStore(t)}
			if ok, err := bridge(t, store, ratelimit.PerHour(1)).Allow(tc.identifier); !ok || err != nil {
				t.Fatalf("Allow = %v, %v; want true, nil", ok, err)
			}
			got := store.keys[0]
			if len(got) > len("echo/")+ratelimit.MaxKeyLen {
				t.Fatalf("key of %d bytes, want at most the namespace and %d", len(got), ratelimit.MaxKeyLen)
			}
			if got != tc.key && !(tc.key == "echo/sha256:" && strings.HasPrefix(got, tc.key) && len(got) == len("echo/sha256:")+64) {
				t.Fatalf("key %q, want %q", got, tc.key)
			}
		})
	}
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

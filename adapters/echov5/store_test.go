package echo_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

type ctxKey struct{}

// ctxStore records the context value under ctxKey of each call, and fails
// with err unless it is nil.
type ctxStore struct {
	ratelimit.Store
	err    error
	values []any
}

func (s *ctxStore) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.values = append(s.values, ctx.Value(ctxKey{}))
	if s.err != nil {
		return ratelimit.Result{}, s.err
	}
	return s.Store.AllowN(ctx, key, limit, n)
}

func TestAllowContext(t *testing.T) {
	errDown := errors.New("store down")
	for _, tc := range []struct {
		name    string
		err     error
		codes   []int
		headers []map[string]string // per request; "" means absent
	}{
		{"the request's context reaches the store and the response gets the headers", nil,
			[]int{200, 200, 429},
			[]map[string]string{
				{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "1800", "Retry-After": ""},
				{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "3600", "Retry-After": ""},
				{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "3600", "Retry-After": "1800"},
			}},
		{"a store error denies, with no headers", errDown,
			[]int{429},
			[]map[string]string{{"X-RateLimit-Limit": "", "X-RateLimit-Remaining": "", "Retry-After": ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New(memory.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
			t.Cleanup(func() { mem.Close() })
			store := &ctxStore{Store: mem, err: tc.err}
			var denied error
			e := echo.New()
			e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
				Store:               echolimit.NewRateLimiterStore(store, ratelimit.PerHour(2)),
				IdentifierExtractor: echolimit.IdentifierByIP(),
				DenyHandler: func(c *echo.Context, _ string, err error) error {
					denied = err
					return middleware.ErrRateLimitExceeded
				},
			}))
			e.GET("/", func(c *echo.Context) error { return c.String(200, "ok") })
			for i, want := range tc.codes {
				r := httptest.NewRequest("GET", "/", nil)
				r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, i))
				w := httptest.NewRecorder()
				e.ServeHTTP(w, r)
				if w.Code != want {
					t.Fatalf("request %d: code %d, want %d", i, w.Code, want)
				}
				if store.values[i] != i {
					t.Fatalf("request %d: the store saw context value %v", i, store.values[i])
				}
				for name, v := range tc.headers[i] {
					if got := w.Header().Get(name); got != v {
						t.Fatalf("request %d: %s = %q, want %q", i, name, got, v)
					}
				}
			}
			if !errors.Is(denied, tc.err) {
				t.Fatalf("DenyHandler got error %v, want %v", denied, tc.err)
			}
		})
	}
}

func TestNilStore(t *testing.T) {
	s := echolimit.NewRateLimiterStore(nil, ratelimit.PerHour(1))
	if ok, err := s.Allow("x"); ok || err == nil {
		t.Fatalf("Allow = %v, %v; want false and an error", ok, err)
	}
	c := echo.New().NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
	if ok, err := s.AllowContext(c, "x"); ok || err == nil {
		t.Fatalf("AllowContext = %v, %v; want false and an error", ok, err)
	}
}

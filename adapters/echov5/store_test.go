package echolimit_test

import (
	"context"
	"errors"
	"net/http"
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
		{"a store error denies failing closed, with no headers", errDown,
			[]int{429},
			[]map[string]string{{"X-RateLimit-Limit": "", "X-RateLimit-Remaining": "", "Retry-After": ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New(memory.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
			t.Cleanup(func() { mem.Close() })
			store := &ctxStore{Store: mem, err: tc.err}
			var denied, told error
			e := echo.New()
			e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
				Store:               bridge(t, store, ratelimit.PerHour(2), ratelimit.WithFailClosed(), ratelimit.WithDenyCache(0), ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = err })),
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
			// The store's error reaches the limiter's error handler; Echo's
			// DenyHandler is told that the limiter could not decide.
			if !errors.Is(told, tc.err) || (denied == nil) != (tc.err == nil) {
				t.Fatalf("the error handler got %v, want %v; DenyHandler got %v", told, tc.err, denied)
			}
		})
	}
}

func TestNilLimiterPanicsAtStartUp(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewRateLimiterStore(nil) did not panic")
		}
	}()
	echolimit.NewRateLimiterStore(nil)
}

// TestAStoreErrorFailsOpenByDefault: the bridge answers as its limiter's
// failure policy says, open by default.
func TestAStoreErrorFailsOpenByDefault(t *testing.T) {
	store := &ctxStore{Store: newStore(t), err: errors.New("store down")}
	var told int
	s := bridge(t, store, ratelimit.PerHour(1), ratelimit.WithErrorHandler(func(*http.Request, error) { told++ }))
	c := echo.New().NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
	if ok, err := s.AllowContext(c, "x"); !ok || err != nil || told != 1 {
		t.Fatalf("AllowContext = %v, %v, error handler told %d times; want true, nil and 1", ok, err, told)
	}
}

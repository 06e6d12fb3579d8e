package echolimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
)

// frozenStore is a store whose backend stops answering once frozen, as a
// redis-server under SIGSTOP does: a call waits until its context is done
// (or a minute, so that a limiter that gave it no deadline fails the test
// rather than hangs it). Before that it admits everything.
type frozenStore struct{ frozen atomic.Bool }

func (s *frozenStore) AllowN(ctx context.Context, _ string, l ratelimit.Limit, _ int) (ratelimit.Result, error) {
	if !s.frozen.Load() {
		return ratelimit.Result{Allowed: true, Limit: l, Remaining: l.Rate - 1}, nil
	}
	select {
	case <-ctx.Done():
		return ratelimit.Result{}, ctx.Err()
	case <-time.After(time.Minute):
		return ratelimit.Result{}, context.DeadlineExceeded
	}
}

// TestBridgeOverAFrozenStoreCostsTheBudget: with the store frozen, a
// request through Echo's RateLimiter and the bridge costs about the
// limiter's time budget (100ms), not the backend's own timeouts, and the
// breaker then spares the next requests even that. (A real frozen
// redis-server under the limiter: the fault tests of store/redis.)
func TestBridgeOverAFrozenStoreCostsTheBudget(t *testing.T) {
	store := &frozenStore{}
	l, err := ratelimit.New(store, ratelimit.PerMinute(100), ratelimit.WithName("echo"), ratelimit.WithPlainKeys(),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{Store: echolimit.NewRateLimiterStore(l)}))
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusOK, "ok") })
	serve := func() (int, time.Duration) {
		start := time.Now()
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w.Code, time.Since(start)
	}
	if code, _ := serve(); code != http.StatusOK {
		t.Fatalf("status %d with the store up, want 200", code)
	}
	store.frozen.Store(true)
	for i := range 10 {
		code, took := serve()
		if code != http.StatusOK {
			t.Fatalf("request %d: status %d with the store frozen, want 200 (fail open)", i, code)
		}
		if took > time.Second {
			t.Fatalf("request %d took %v with the store frozen, want about the 100ms budget", i, took)
		}
	}
	if s := l.Breaker().State(); s != ratelimit.BreakerOpen {
		t.Errorf("breaker %v after 10 requests to a frozen store, want open", s)
	}
}

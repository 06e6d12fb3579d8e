package echolimit_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestCountedResponses: with WithCountIf, concurrent failures (an
// echo.HTTPError 401 returned by the handler) reach the handler no more
// often than the budget allows, and responses that do not count give
// their cost back.
func TestCountedResponses(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerHour(2), ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(echolimit.Middleware(l))
	var reached atomic.Int64
	e.GET("/login", func(c *echo.Context) error {
		reached.Add(1)
		if c.QueryParam("password") == "right" {
			return c.NoContent(http.StatusNoContent)
		}
		return echo.NewHTTPError(http.StatusUnauthorized, "wrong password")
	})
	serve := func(password string) int {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/login?password="+password, nil))
		return w.Code
	}
	for range 10 {
		if c := serve("right"); c != http.StatusNoContent {
			t.Fatalf("right password: %d", c)
		}
	}
	reached.Store(0)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { serve("x") })
	}
	wg.Wait()
	if n := reached.Load(); n != 2 {
		t.Fatalf("%d of 20 concurrent failures reached the handler, want 2", n)
	}
}

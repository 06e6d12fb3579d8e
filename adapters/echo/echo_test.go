package echolimit_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echo"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// bridge is a RateLimiterStore over a limiter named "echo" on store under
// limit.
func bridge(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, opts ...ratelimit.Option) *echolimit.RateLimiterStore {
	t.Helper()
	// The stores of these tests are shared (not Local) and show the keys
	// they are given: the identifiers stay readable.
	l, err := ratelimit.New(store, limit, append([]ratelimit.Option{ratelimit.WithName("echo"), ratelimit.WithPlainKeys()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return echolimit.NewRateLimiterStore(l)
}

func newStore(t *testing.T) *memory.Store {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	return s
}

func codes(e *echo.Echo, reqs ...func() *http.Request) []int {
	var out []int
	for _, r := range reqs {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r())
		out = append(out, w.Code)
	}
	return out
}

func plain(path string) func() *http.Request {
	return func() *http.Request { return httptest.NewRequest("GET", path, nil) }
}

func TestMiddleware(t *testing.T) {
	l, _ := ratelimit.New(newStore(t), ratelimit.PerHour(2))
	e := echo.New()
	ran := 0
	e.Use(echolimit.Middleware(l, echolimit.WithSkipper(func(c echo.Context) bool { return c.Path() == "/healthz" })))
	e.GET("/", func(c echo.Context) error { ran++; return c.String(200, "ok") })
	e.GET("/healthz", func(c echo.Context) error { return c.String(200, "ok") })
	got := codes(e, plain("/healthz"), plain("/healthz"), plain("/healthz"), plain("/"), plain("/"), plain("/"))
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(got, want) || ran != 2 {
		t.Fatalf("codes %v, handler ran %d; want %v and 2", got, ran, want)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, plain("/")())
	if w.Header().Get("Retry-After") == "" || w.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers: %v", w.Header())
	}
}

func TestKeyFromContext(t *testing.T) {
	l, _ := ratelimit.New(newStore(t), ratelimit.PerHour(1))
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("user", c.Request().Header.Get("User")); return next(c) }
	})
	e.Use(echolimit.Middleware(l, echolimit.KeyFromContext(func(c echo.Context) (string, error) {
		u, _ := c.Get("user").(string)
		if u == "" {
			return "", &ratelimit.MissingKeyError{What: "user", Status: http.StatusUnauthorized}
		}
		return "user:" + u, nil
	})))
	e.GET("/", func(c echo.Context) error { return c.String(200, "ok") })
	as := func(u string) func() *http.Request {
		return func() *http.Request { r := httptest.NewRequest("GET", "/", nil); r.Header.Set("User", u); return r }
	}
	if got, want := codes(e, as("alice"), as("alice"), as("bob"), plain("/")), []int{200, 429, 200, 401}; !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}

func TestRateLimiterStoreBridge(t *testing.T) {
	e := echo.New()
	e.Use(middleware.RateLimiter(bridge(t, newStore(t), ratelimit.PerHour(2))))
	e.GET("/", func(c echo.Context) error { return c.String(200, "ok") })
	if got, want := codes(e, plain("/"), plain("/"), plain("/")), []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}

package echo_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echo"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleMiddleware() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerMinute(1))
	if err != nil {
		panic(err)
	}

	e := echo.New()
	e.Use(echolimit.Middleware(limiter))
	e.GET("/", func(c echo.Context) error { return c.String(200, "hello") })

	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d %s\n", w.Code, w.Body)
	}
	// Output:
	// 200 hello
	// 429 Too Many Requests
}

// Echo's own RateLimiter middleware, keeping its budgets in any store.
func ExampleNewRateLimiterStore() {
	store := memory.New()
	defer store.Close()
	e := echo.New()
	e.Use(middleware.RateLimiter(echolimit.NewRateLimiterStore(store, ratelimit.PerHour(1))))
	e.GET("/", func(c echo.Context) error { return c.String(200, "hello") })
	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 429
}

// Skip health checks and key on a user set by earlier middleware.
func ExampleWithSkipper() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("user", "alice"); return next(c) } // stands in for authentication
	})
	e.Use(echolimit.Middleware(limiter,
		echolimit.WithSkipper(func(c echo.Context) bool { return c.Path() == "/healthz" }),
		echolimit.KeyFromContext(func(c echo.Context) (string, error) { return "user:" + c.Get("user").(string), nil }),
	))
	e.GET("/", func(c echo.Context) error { return c.String(200, "hello") })
	e.GET("/healthz", func(c echo.Context) error { return c.String(200, "ok") })
	for _, path := range []string{"/healthz", "/healthz", "/", "/"} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /healthz 200
	// /healthz 200
	// / 200
	// / 429
}

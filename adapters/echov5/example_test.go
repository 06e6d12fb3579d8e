package echolimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
	"github.com/ratelimit-go/ratelimit/clientip"
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
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })

	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d %s\n", w.Code, w.Body)
	}
	// Output:
	// 200 hello
	// 429 Too Many Requests
}

// Echo's own RateLimiter middleware, keeping its budgets in any store and
// keying on the connection's address, whatever X-Forwarded-For says.
func ExampleNewRateLimiterStore() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("echo"))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               echolimit.NewRateLimiterStore(limiter),
		IdentifierExtractor: echolimit.IdentifierByIP(),
	}))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })
	for _, forged := range []string{"192.0.2.1", "192.0.2.2"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Forwarded-For", forged)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 429
}

// The store keys of Echo's identifiers: namespaced, and hashed when long.
func ExampleRateLimiterStore_Allow() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("echo"))
	if err != nil {
		panic(err)
	}
	s := echolimit.NewRateLimiterStore(limiter)
	for _, id := range []string{"ip:203.0.113.7", "ip:203.0.113.7", ""} {
		allowed, err := s.Allow(id)
		fmt.Printf("%q %v %v\n", id, allowed, err)
	}
	// Output:
	// "ip:203.0.113.7" true <nil>
	// "ip:203.0.113.7" false <nil>
	// "" true <nil>
}

// Behind a load balancer: believe X-Forwarded-For from it, and only from it.
func ExampleIdentifierByIP() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("echo"))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: echolimit.NewRateLimiterStore(limiter),
		IdentifierExtractor: echolimit.IdentifierByIP(
			clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))),
	}))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })
	for _, client := range []string{"198.51.100.7", "198.51.100.7", "198.51.100.8"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.1:4711" // the load balancer
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 198.51.100.7 200
	// 198.51.100.7 429
	// 198.51.100.8 200
}

// One budget per matched route, such as /items/:id.
func ExampleKeyByRoute() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	e := echo.New()
	e.Use(echolimit.Middleware(limiter, echolimit.KeyFromContext(echolimit.KeyByRoute())))
	e.GET("/items/:id", func(c *echo.Context) error { return c.String(200, "item") })
	for _, path := range []string{"/items/1", "/items/2"} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /items/1 200
	// /items/2 429
}

// A budget per client and route.
func ExampleCompose() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	e := echo.New()
	e.Use(echolimit.Middleware(limiter, echolimit.KeyFromContext(
		echolimit.Compose(echolimit.KeyByRoute(), echolimit.IdentifierByIP()))))
	e.GET("/items/:id", func(c *echo.Context) error { return c.String(200, "item") })
	for _, client := range []string{"198.51.100.7", "198.51.100.7", "198.51.100.8"} {
		r := httptest.NewRequest("GET", "/items/1", nil)
		r.RemoteAddr = client + ":4711"
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 198.51.100.7 200
	// 198.51.100.7 429
	// 198.51.100.8 200
}

// Skip health checks.
func ExampleWithSkipper() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	e := echo.New()
	e.Use(echolimit.Middleware(limiter,
		echolimit.WithSkipper(func(c *echo.Context) bool { return c.Path() == "/healthz" })))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })
	e.GET("/healthz", func(c *echo.Context) error { return c.String(200, "ok") })
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

// Key on a user set by earlier middleware.
func ExampleKeyFromContext() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error { c.Set("user", "alice"); return next(c) } // stands in for authentication
	})
	e.Use(echolimit.Middleware(limiter, echolimit.KeyFromContext(func(c *echo.Context) (string, error) {
		user, _ := c.Get("user").(string)
		if user == "" {
			return "", &ratelimit.MissingKeyError{What: "user", Status: http.StatusUnauthorized}
		}
		return "user:" + user, nil
	})))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })
	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 429
}

// Echo's RateLimiter passes the request to the store, which sets the
// rate-limit headers.
func ExampleRateLimiterStore_AllowContext() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("echo"))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               echolimit.NewRateLimiterStore(limiter),
		IdentifierExtractor: echolimit.IdentifierByIP(),
	}))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })
	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Retry-After") != "")
	}
	// Output:
	// 200 0 false
	// 429 0 true
}

package ginlimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleMiddleware() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerMinute(1))
	if err != nil {
		panic(err)
	}

	engine := gin.New()
	engine.Use(ginlimit.Middleware(limiter))
	engine.GET("/", func(c *gin.Context) { c.String(200, "hello") })

	for range 2 {
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d %s\n", w.Code, w.Body)
	}
	// Output:
	// 200 hello
	// 429 Too Many Requests
}

// Behind a proxy: tell gin which proxies to trust first, then key on its
// c.ClientIP().
func ExampleKeyByClientIP() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))

	engine := gin.New()
	if err := engine.SetTrustedProxies([]string{"10.0.0.0/8"}); err != nil {
		panic(err)
	}
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyByClientIP()))
	engine.GET("/", func(c *gin.Context) { c.String(200, "hello") })

	for _, client := range []string{"198.51.100.7", "198.51.100.7", "198.51.100.8"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.1:4711" // the load balancer
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 198.51.100.7 200
	// 198.51.100.7 429
	// 198.51.100.8 200
}

// One budget per matched route, such as /items/:id.
func ExampleKeyByFullPath() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyByFullPath()))
	engine.GET("/items/:id", func(c *gin.Context) { c.String(200, "item") })
	for _, path := range []string{"/items/1", "/items/2"} {
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /items/1 200
	// /items/2 429
}

// One budget per matched route; paths that match no route share one.
func ExampleKeyByRoute() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyFromContext(ginlimit.KeyByRoute())))
	engine.GET("/items/:id", func(c *gin.Context) { c.String(200, "item") })
	for _, path := range []string{"/items/1", "/items/2", "/nope/1", "/nope/2"} {
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /items/1 200
	// /items/2 429
	// /nope/1 404
	// /nope/2 429
}

// A budget per client and route, keying clients on the connection's
// address unless it is a trusted proxy.
func ExampleCompose() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyFromContext(
		ginlimit.Compose(ginlimit.KeyByRoute(), ginlimit.KeyByIP()))))
	engine.GET("/items/:id", func(c *gin.Context) { c.String(200, "item") })
	for _, client := range []string{"198.51.100.7", "198.51.100.7", "198.51.100.8"} {
		r := httptest.NewRequest("GET", "/items/1", nil)
		r.RemoteAddr = client + ":4711"
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 198.51.100.7 200
	// 198.51.100.7 429
	// 198.51.100.8 200
}

// Behind a load balancer: believe X-Forwarded-For from it, and only from it.
func ExampleKeyByIP() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyFromContext(
		ginlimit.KeyByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))))))
	engine.GET("/", func(c *gin.Context) { c.String(200, "hello") })
	for _, client := range []string{"198.51.100.7", "198.51.100.7", "198.51.100.8"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.1:4711" // the load balancer
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 198.51.100.7 200
	// 198.51.100.7 429
	// 198.51.100.8 200
}

// Key on what authentication middleware set on the context.
func ExampleKeyFromContext() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(func(c *gin.Context) { c.Set("user", "alice") }) // stands in for authentication
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyFromContext(func(c *gin.Context) (string, error) {
		user := c.GetString("user")
		if user == "" {
			return "", &ratelimit.MissingKeyError{What: "user", Status: http.StatusUnauthorized}
		}
		return "user:" + user, nil
	})))
	engine.GET("/", func(c *gin.Context) { c.String(200, "hello") })
	for range 2 {
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 429
}

package gin_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
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

// Key on what authentication middleware set on the context.
func ExampleKeyFromContext() {
	gin.SetMode(gin.ReleaseMode)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1))
	engine := gin.New()
	engine.Use(func(c *gin.Context) { c.Set("user", "alice") }) // stands in for authentication
	engine.Use(ginlimit.Middleware(limiter, ginlimit.KeyFromContext(func(c *gin.Context) (string, error) {
		return "user:" + c.GetString("user"), nil
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

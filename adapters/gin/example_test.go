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

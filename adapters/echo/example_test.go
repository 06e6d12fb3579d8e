package echo_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/labstack/echo/v4"

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

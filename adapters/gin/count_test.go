package ginlimit_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
)

// TestCountedResponses: with WithCountIf, concurrent failures reach the
// handler no more often than the budget (2) allows, and responses that do
// not count give their cost back.
func TestCountedResponses(t *testing.T) {
	l := newLimiter(t, ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	e := gin.New()
	e.Use(ginlimit.Middleware(l))
	var reached atomic.Int64
	e.GET("/login", func(c *gin.Context) {
		reached.Add(1)
		if c.Query("password") == "right" {
			c.Status(http.StatusNoContent)
			return
		}
		c.Status(http.StatusUnauthorized)
	})
	for range 10 { // right passwords never count
		if w := get(e, "/login?password=right", nil); w.Code != http.StatusNoContent {
			t.Fatalf("right password: %d", w.Code)
		}
	}
	reached.Store(0)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/login?password=x", nil)) })
	}
	wg.Wait()
	if n := reached.Load(); n != 2 {
		t.Fatalf("%d of 20 concurrent failures reached the handler, want 2", n)
	}
}

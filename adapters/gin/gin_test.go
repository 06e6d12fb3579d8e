package gin_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func init() { gin.SetMode(gin.TestMode) }

func newLimiter(t *testing.T, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	l, err := ratelimit.New(store, ratelimit.PerHour(2), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func get(e *gin.Engine, path string, set func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if set != nil {
		set(r)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

func TestDeniedRequestIsAborted(t *testing.T) {
	e := gin.New()
	ran := 0
	e.Use(ginlimit.Middleware(newLimiter(t)))
	e.GET("/", func(c *gin.Context) { ran++; c.String(200, "ok") })
	var codes []int
	for range 3 {
		codes = append(codes, get(e, "/", nil).Code)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 || ran != 2 {
		t.Fatalf("codes %v, handler ran %d times; want [200 200 429] and 2", codes, ran)
	}
	w := get(e, "/", nil)
	if w.Header().Get("Retry-After") == "" || w.Header().Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("429 headers: %v", w.Header())
	}
}

func TestKeyFromContext(t *testing.T) {
	e := gin.New()
	e.Use(func(c *gin.Context) { c.Set("user", c.GetHeader("User")) })
	e.Use(ginlimit.Middleware(newLimiter(t), ginlimit.KeyFromContext(func(c *gin.Context) (string, error) {
		u := c.GetString("user")
		if u == "" {
			return "", &ratelimit.MissingKeyError{What: "user", Status: http.StatusUnauthorized}
		}
		return "user:" + u, nil
	})))
	e.GET("/", func(c *gin.Context) { c.String(200, "ok") })
	as := func(u string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("User", u) } }
	got := []int{get(e, "/", as("alice")).Code, get(e, "/", as("alice")).Code, get(e, "/", as("alice")).Code, get(e, "/", as("bob")).Code, get(e, "/", nil).Code}
	want := []int{200, 200, 429, 200, 401}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("codes %v, want %v", got, want)
		}
	}
}

func TestKeyByFullPath(t *testing.T) {
	e := gin.New()
	e.Use(ginlimit.Middleware(newLimiter(t), ginlimit.KeyByFullPath()))
	e.GET("/items/:id", func(c *gin.Context) { c.String(200, "ok") })
	e.GET("/other", func(c *gin.Context) { c.String(200, "ok") })
	got := []int{get(e, "/items/1", nil).Code, get(e, "/items/2", nil).Code, get(e, "/items/3", nil).Code, get(e, "/other", nil).Code}
	if got[0] != 200 || got[1] != 200 || got[2] != 429 || got[3] != 200 {
		t.Fatalf("codes %v, want one budget for /items/:id", got)
	}
}

func TestKeyByClientIPFollowsTrustedProxies(t *testing.T) {
	e := gin.New()
	if err := e.SetTrustedProxies([]string{"10.0.0.0/8"}); err != nil {
		t.Fatal(err)
	}
	e.Use(ginlimit.Middleware(newLimiter(t), ginlimit.KeyByClientIP()))
	e.GET("/", func(c *gin.Context) { c.String(200, "ok") })
	via := func(remote, xff string) func(*http.Request) {
		return func(r *http.Request) { r.RemoteAddr = remote; r.Header.Set("X-Forwarded-For", xff) }
	}
	got := []int{
		get(e, "/", via("10.0.0.1:1", "198.51.100.7")).Code,
		get(e, "/", via("10.0.0.2:1", "198.51.100.7")).Code,
		get(e, "/", via("10.0.0.3:1", "198.51.100.7")).Code,
		get(e, "/", via("203.0.113.1:1", "198.51.100.7")).Code, // untrusted: its own address
	}
	if got[0] != 200 || got[1] != 200 || got[2] != 429 || got[3] != 200 {
		t.Fatalf("codes %v, want [200 200 429 200]", got)
	}
}

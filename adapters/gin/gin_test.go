package ginlimit_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
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

func TestRouteKeys(t *testing.T) {
	const client = "203.0.113.9:4711"
	at := func(remote string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = remote } }
	type req struct {
		path string
		set  func(*http.Request)
	}
	for _, tc := range []struct {
		name  string
		opt   ginlimit.Option
		reqs  []req
		codes []int
	}{
		{"the route key gives every id of a route one budget", ginlimit.KeyFromContext(ginlimit.KeyByRoute()),
			[]req{{"/items/1", nil}, {"/items/2", nil}, {"/items/3", nil}, {"/other", nil}},
			[]int{200, 200, 429, 200}},
		{"KeyByFullPath is the route key", ginlimit.KeyByFullPath(),
			[]req{{"/items/1", nil}, {"/items/2", nil}, {"/items/3", nil}, {"/other", nil}},
			[]int{200, 200, 429, 200}},
		{"unmatched paths share one budget", ginlimit.KeyByFullPath(),
			[]req{{"/a", nil}, {"/b", nil}, {"/c", nil}, {"/items/1", nil}},
			[]int{404, 404, 429, 200}},
		{"route and address composed give each client a budget per route",
			ginlimit.KeyFromContext(ginlimit.Compose(ginlimit.KeyByRoute(), ginlimit.KeyByIP())),
			[]req{{"/items/1", at(client)}, {"/items/2", at(client)}, {"/items/3", at(client)}, {"/items/1", at("198.51.100.1:1")}, {"/other", at(client)}},
			[]int{200, 200, 429, 200, 200}},
		{"KeyByIP ignores a forged X-Forwarded-For", ginlimit.KeyFromContext(ginlimit.KeyByIP()),
			[]req{
				{"/other", func(r *http.Request) { r.Header.Set("X-Forwarded-For", "192.0.2.1") }},
				{"/other", func(r *http.Request) { r.Header.Set("X-Forwarded-For", "192.0.2.2") }},
				{"/other", func(r *http.Request) { r.Header.Set("X-Forwarded-For", "192.0.2.3") }},
			},
			[]int{200, 200, 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := gin.New()
			e.Use(ginlimit.Middleware(newLimiter(t), tc.opt))
			e.GET("/items/:id", func(c *gin.Context) { c.String(200, "ok") })
			e.GET("/other", func(c *gin.Context) { c.String(200, "ok") })
			var got []int
			for _, r := range tc.reqs {
				got = append(got, get(e, r.path, r.set).Code)
			}
			if !slices.Equal(got, tc.codes) {
				t.Fatalf("codes %v, want %v", got, tc.codes)
			}
		})
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

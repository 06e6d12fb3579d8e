package ginlimit_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestRulesHoldWhateverGinMakesOfThePath: rule POST /v1/login, 3 a
// minute, in front of a Gin engine with its defaults (trailing-slash and fixed-path redirects), over real HTTP. Each form of the path
// that Gin may route to the login handler is sent 3 times by one client;
// the handler must run 3 times in all, and other routes stay unlimited.
// (The same test for ServeMux and hand-written routers is in package rules.)
func TestRulesHoldWhateverGinMakesOfThePath(t *testing.T) {
	attackPaths := []string{
		"/v1/login", "/v1%2Flogin", "/v1%2flogin", "/v1/login/", "/v1/x/%2e%2e/login", "/v1/x/%2E%2E/login",
		"//v1//login", "/v1/./login", "/v1//login/", "/V1/Login", "/v1%2FLOGIN", "/v1/login/.",
	}
	cfg, err := rules.Parse([]byte(`
rules:
  - name: login
    match: "POST /v1/login"
    rate: 3
    period: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	var logins, others atomic.Int64
	login := func(http.ResponseWriter, *http.Request) { logins.Add(1) }
	other := func(http.ResponseWriter, *http.Request) { others.Add(1) }
	gin.SetMode(gin.TestMode)
	app := gin.New()
	app.POST("/v1/login", gin.WrapF(login))
	app.NoRoute(gin.WrapF(other))
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(cfg, store, app)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, p string) {
		req, err := http.NewRequest(method, srv.URL+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	for _, p := range attackPaths {
		for range 3 {
			send("POST", p)
		}
	}
	if n := logins.Load(); n != 3 {
		t.Fatalf("the login handler ran %d times for %d forms of /v1/login sent 3 times each, want 3", n, len(attackPaths))
	}
	others.Store(0)
	for range 10 {
		send("POST", "/v1/other")
		send("GET", "/v1/login")
	}
	if n := others.Load(); n != 20 {
		t.Fatalf("other routes reached %d times of 20: the rule limited requests it does not match", n)
	}
}

package rules_test

import (
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// attackPaths are forms of /v1/login that some router behind the rules
// takes for it ("%C4%B0" is 'İ', which strings.ToLower makes an i).
var attackPaths = []string{
	"/v1/login", "/v1%2Flogin", "/v1%2flogin", "/v1/login/", "/v1/x/%2e%2e/login", "/v1/x/%2E%2E/login",
	"//v1//login", "/v1/./login", "/v1//login/", "/V1/Login", "/v1%2FLOGIN", "/v1/login/.",
	"/v1/log%C4%B0n", "/v1/LOG%C4%B0N",
}

// TestRulesHoldWhateverTheRouterMakesOfThePath: rule POST /v1/login, 3 a
// minute, in front of routers that read a path in different ways, over
// real HTTP (Gin and Echo: in the modules of their adapters). Each form of the path is sent 3 times by one client; the
// login handler must run 3 times in all, and other routes stay unlimited.
func TestRulesHoldWhateverTheRouterMakesOfThePath(t *testing.T) {
	apps := []struct {
		name string
		app  func(login, other http.HandlerFunc) http.Handler
	}{
		{"ServeMux", func(login, other http.HandlerFunc) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("POST /v1/login", login)
			mux.HandleFunc("/", other)
			return mux
		}},
		{"a switch on r.URL.Path", func(login, other http.HandlerFunc) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == "POST" && r.URL.Path == "/v1/login":
					login(w, r)
				default:
					other(w, r)
				}
			})
		}},
		{"an app that runs path.Clean", func(login, other http.HandlerFunc) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "POST" && path.Clean(r.URL.Path) == "/v1/login" {
					login(w, r)
					return
				}
				other(w, r)
			})
		}},
		{"an app that folds case", func(login, other http.HandlerFunc) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "POST" && strings.ToLower(path.Clean(r.URL.Path)) == "/v1/login" {
					login(w, r)
					return
				}
				other(w, r)
			})
		}},
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
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			var logins, others atomic.Int64
			app := a.app(func(w http.ResponseWriter, r *http.Request) { logins.Add(1) },
				func(w http.ResponseWriter, r *http.Request) { others.Add(1) })
			store := memory.New()
			defer store.Close()
			h, err := rules.NewHandler(cfg, store, app)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
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
		})
	}
}

// TestEveryReadingsRuleApplies: "/files/a%2Fb" is /files/{name} to
// ServeMux and /files/a/b to a router on the decoded path: it passes
// through both rules' limiters.
func TestEveryReadingsRuleApplies(t *testing.T) {
	cfg, err := rules.Parse([]byte(`
rules:
  - {name: any-file, match: "GET /files/{name}", rate: 1, period: 1m}
  - {name: ab, match: "GET /files/a/b", rate: 4, period: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(cfg, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	check(t, "/files/a%2Fb, limited by any-file", do(h, 2, "GET", "/files/a%2Fb", nil), 404, 429)
	check(t, "/files/a/b, whose budget the first took from", do(h, 4, "GET", "/files/a/b", nil), 404, 404, 404, 429)
}

// TestPatternsThatDifferInCase: a router that folds case takes /Api/x for
// /API/ or /api/: both rules' limits apply to it.
func TestPatternsThatDifferInCase(t *testing.T) {
	c, err := rules.Parse([]byte(`
rules:
  - {name: a, match: "/API/", rate: 1, period: 1m}
  - {name: b, match: "/api/", rate: 2, period: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(c, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	check(t, "/Api/x", do(h, 2, "GET", "/Api/x", nil), 404, 429)
	// So may /api/x, once the patterns differ in case only.
	check(t, "/api/x, which such a router may serve as /API/", do(h, 1, "GET", "/api/x", nil), 429)
}

// TestRulesHoldForUnicodeCaseFolding: rule POST /v1/keys, 3 a minute, in
// front of apps that fold case as strings.ToLower and strings.EqualFold
// do, which take the Kelvin sign for a k and the long s 'ſ' for an s:
// /v1/%E2%84%AAeys and /v1/key%C5%BF reach the keys handler, so they
// spend its budget. The limiter once folded only paths with an ASCII
// capital, and lower-cased them as strings.ToLower only.
func TestRulesHoldForUnicodeCaseFolding(t *testing.T) {
	cfg, err := rules.Parse([]byte(`
rules:
  - name: keys
    match: "POST /v1/keys"
    rate: 3
    period: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/v1/%E2%84%AAeys", "/v1/key%C5%BF", "/V1/%E2%84%AAEY%C5%BF", "/v1/keys"}
	for _, fold := range []struct {
		name string
		is   func(p string) bool
	}{
		{"strings.ToLower", func(p string) bool { return strings.ToLower(p) == "/v1/keys" }},
		{"strings.EqualFold", func(p string) bool { return strings.EqualFold(p, "/v1/keys") }},
	} {
		t.Run(fold.name, func(t *testing.T) {
			var keys atomic.Int64
			app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "POST" && fold.is(r.URL.Path) {
					keys.Add(1)
				}
			})
			store := memory.New()
			defer store.Close()
			h, err := rules.NewHandler(cfg, store, app)
			if err != nil {
				t.Fatal(err)
			}
			reached := 0
			for _, p := range paths {
				if !fold.is(httptest.NewRequest("POST", p, nil).URL.Path) {
					continue // this fold does not take p for /v1/keys
				}
				reached++
				for range 3 {
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", p, nil))
				}
			}
			if reached < 2 {
				t.Fatalf("only %d of the paths reach /v1/keys under %s: the test proves nothing", reached, fold.name)
			}
			if n := keys.Load(); n != 3 {
				t.Errorf("the keys handler ran %d times for %d forms of /v1/keys sent 3 times each, want 3", n, reached)
			}
		})
	}
}

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestRoutes(t *testing.T) {
	store := memory.New()
	defer store.Close()
	mux, _, err := routes(store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, mux)
}

// TestRoutesFromFile: rules.yaml gives the same limits as the built-in routes.
func TestRoutesFromFile(t *testing.T) {
	store := memory.New()
	defer store.Close()
	h, err := routesFromFile(store, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, withPlan(h))
}

func checkRoutes(t *testing.T, mux http.Handler) {
	t.Helper()
	count := func(path string, n int, header map[string]string) (ok, limited int) {
		for range n {
			r := httptest.NewRequest("GET", path, nil)
			for k, v := range header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			switch w.Code {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
			default:
				t.Fatalf("%s: status %d", path, w.Code)
			}
		}
		return ok, limited
	}
	if ok, limited := count("/", 12, nil); ok != 10 || limited != 2 {
		t.Errorf("/: %d ok, %d limited; want 10 and 2", ok, limited)
	}
	if ok, limited := count("/export", 5, nil); ok != 4 || limited != 1 {
		t.Errorf("/export: %d ok, %d limited; want 4 and 1 (cost 5 of 20)", ok, limited)
	}
	if ok, _ := count("/api/items", 61, map[string]string{"X-API-Key": "k1"}); ok != 60 {
		t.Errorf("/api/ with a key: %d ok, want 60", ok)
	}
	if ok, _ := count("/api/items", 1, nil); ok != 1 {
		t.Error("/api/ without a key is not limited per IP")
	}
	if ok, _ := count("/healthz", 50, nil); ok != 50 {
		t.Error("/healthz is limited")
	}
}

// TestAPIKeysCannotEscapeTheAddressCeiling: one address inventing API keys
// gets 120 per minute, whatever keys it sends; a key keeps its 60.
func TestAPIKeysCannotEscapeTheAddressCeiling(t *testing.T) {
	for _, file := range []string{"", "rules.yaml"} {
		t.Run("rules "+file, func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			s, err := app(config{store: store, rulesFile: file})
			if err != nil {
				t.Fatal(err)
			}
			h := s.handler
			passed := 0
			for i := range 300 {
				r := httptest.NewRequest("GET", "/api/items", nil)
				r.Header.Set("X-API-Key", fmt.Sprint("invented-", i))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code == http.StatusOK {
					passed++
				}
			}
			if passed != 120 {
				t.Errorf("one address with 300 invented keys: %d passed, want 120", passed)
			}
		})
	}
}

// TestPostToAPIIsFree: the app answers POST /api/ 405, and that spends no
// token of the api budget, with the built-in routes or the rules file.
func TestPostToAPIIsFree(t *testing.T) {
	for _, file := range []string{"", "rules.yaml"} {
		t.Run("rules "+file, func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			s, err := app(config{store: store, rulesFile: file})
			if err != nil {
				t.Fatal(err)
			}
			send := func(method string) *httptest.ResponseRecorder {
				r := httptest.NewRequest(method, "/api/items", nil)
				r.Header.Set("X-API-Key", "k1")
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, r)
				return w
			}
			for range 5 {
				if w := send("POST"); w.Code != http.StatusMethodNotAllowed {
					t.Fatalf("POST /api/: %d, want 405", w.Code)
				}
			}
			w := send("GET")
			if w.Code != http.StatusOK || w.Header().Get("X-RateLimit-Remaining") != "59" {
				t.Fatalf("GET /api/ after 5 POSTs: %d, %s remaining; want 200 and 59", w.Code, w.Header().Get("X-RateLimit-Remaining"))
			}
		})
	}
}

// TestRulesFileDescribesItsLimits: the start-up log names every limit.
func TestRulesFileDescribesItsLimits(t *testing.T) {
	store := memory.New()
	defer store.Close()
	s, err := app(config{store: store, rulesFile: "rules.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := "GET /{$} home: 10 per 1m per ip; " +
		"GET /api/ api: 1200 per 1m per ip + api-per-ip: 120 per 1m per ip + " +
		"plan: free 60 per 1m, pro 600 per 1m per header:X-API-Key else ip + " +
		"daily: free 1000 per day (Europe/Berlin), pro 100000 per day (Europe/Berlin) per header:X-API-Key else ip; " +
		"GET /export export: 20 per 1m per ip (cost 5); " +
		"POST /login login: 5 per 1h per ip (counts 401, 403, blocks 15m)"
	if s.limits != want {
		t.Errorf("limits:\n%s\nwant\n%s", s.limits, want)
	}
}

// TestMetrics is the README's loop: 15 requests to / under 10 per minute,
// then /metrics; with dry run, 15 pass and 5 are reported as would-deny.
func TestMetrics(t *testing.T) {
	for _, tt := range []struct {
		dryRun       bool
		ok           int
		allowed, not string
	}{
		{false, 10, `ratelimit_requests_total{limiter="home",policy="home",result="allowed"} 10`, `ratelimit_requests_total{limiter="home",policy="home",result="denied"} 5`},
		{true, 15, `ratelimit_requests_total{limiter="home",policy="home",result="allowed"} 10`, `ratelimit_requests_total{limiter="home",policy="home",result="dry_run_denied"} 5`},
	} {
		store := memory.New()
		defer store.Close()
		s, err := app(config{store: store, dryRun: tt.dryRun})
		if err != nil {
			t.Fatal(err)
		}
		h := s.handler
		ok := 0
		for range 15 {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code == http.StatusOK {
				ok++
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		body := w.Body.String()
		if ok != tt.ok || !strings.Contains(body, tt.allowed) || !strings.Contains(body, tt.not) {
			t.Errorf("dry run %v: %d passed (want %d); /metrics lacks %q or %q:\n%s", tt.dryRun, ok, tt.ok, tt.allowed, tt.not, grepLines(body, "ratelimit_requests_total"))
		}
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestRulesFilePlansAndLogin: with rules.yaml, a pro key gets the pro
// plan's limit and name, and /login counts failed attempts only, then
// blocks the address.
func TestRulesFilePlansAndLogin(t *testing.T) {
	store := memory.New()
	defer store.Close()
	s, err := app(config{store: store, rulesFile: "rules.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/api/items", nil)
		r.Header.Set("X-API-Key", key)
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, r)
		return w
	}
	for key, want := range map[string]string{"pro-acme": `"plan.pro";q=600;w=60`, "k1": `"plan.free";q=60;w=60`} {
		if w := get(key); w.Code != 200 || !strings.Contains(w.Header().Get("RateLimit-Policy"), want) {
			t.Errorf("%s: %d, RateLimit-Policy %q; want 200 and %s", key, w.Code, w.Header().Get("RateLimit-Policy"), want)
		}
	}
	login := func(password string) int {
		r := httptest.NewRequest("POST", "/login", strings.NewReader("account=ann&password="+password))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, r)
		return w.Code
	}
	for range 10 {
		if code := login("correct-horse"); code != 200 {
			t.Fatalf("a right password: %d, want 200 (never counted)", code)
		}
	}
	var codes []int
	for range 6 {
		codes = append(codes, login("guess"))
	}
	if fmt.Sprint(codes) != "[401 401 401 401 401 429]" || login("correct-horse") != 429 {
		t.Fatalf("wrong passwords: %v, then a right one; want 5 401s, then 429s (blocked)", codes)
	}
}

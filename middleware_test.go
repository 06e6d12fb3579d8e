package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// fakeClock is a settable clock for memory.WithClock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// keyRecorder is a store that remembers the keys it was asked about.
type keyRecorder struct {
	ratelimit.Store
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	k.mu.Lock()
	k.keys = append(k.keys, key)
	k.mu.Unlock()
	return k.Store.AllowN(ctx, key, l, n)
}

// Local forwards the wrapped store's ratelimit.Local.
func (k *keyRecorder) Local() bool {
	l, ok := k.Store.(ratelimit.Local)
	return ok && l.Local()
}

type failingStore struct{}

var errDown = errors.New("store down")

func (failingStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, errDown
}

// fixture is a limited handler that counts the requests it served.
type fixture struct {
	t       *testing.T
	clock   *fakeClock
	handler http.Handler
	served  int
	store   *keyRecorder
}

func newFixture(t *testing.T, limit ratelimit.Limit, opts ...ratelimit.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	mem := memory.New(memory.WithClock(f.clock.Now))
	t.Cleanup(func() { mem.Close() })
	f.store = &keyRecorder{Store: mem}
	l, err := ratelimit.New(f.store, limit, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.handler = l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.served++
		w.Write([]byte("ok"))
	}))
	return f
}

type req struct {
	remote  string
	headers map[string]string
	path    string
}

func (f *fixture) do(r req) *httptest.ResponseRecorder {
	f.t.Helper()
	path := r.path
	if path == "" {
		path = "/"
	}
	hr := httptest.NewRequest("GET", path, nil)
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	for k, v := range r.headers {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.handler.ServeHTTP(w, hr)
	return w
}

// codes sends the requests and returns their status codes.
func (f *fixture) codes(rs ...req) []int {
	var out []int
	for _, r := range rs {
		out = append(out, f.do(r).Code)
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHeaders(t *testing.T) {
	l := ratelimit.PerMinute(3) // a token every 20 s
	tests := []struct {
		name  string
		style ratelimit.HeaderStyle
		want  [3]map[string]string // after requests 1, 3 and 4 (denied)
	}{
		{"X-RateLimit", ratelimit.HeadersXRateLimit, [3]map[string]string{
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "2", "X-RateLimit-Reset": "20"},
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"},
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60", "Retry-After": "20"},
		}},
		{"IETF", ratelimit.HeadersIETF, [3]map[string]string{
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=2;t=20`},
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=0;t=20`}, // the next token
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=0;t=20`, "Retry-After": "20"},
		}},
		{"both", ratelimit.HeadersBoth, [3]map[string]string{
			{"X-RateLimit-Remaining": "2", "RateLimit": `"api";r=2;t=20`},
			{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60", "RateLimit": `"api";r=0;t=20`},
			{"X-RateLimit-Reset": "60", "RateLimit": `"api";r=0;t=20`, "Retry-After": "20"},
		}},
		{"none", ratelimit.HeadersNone, [3]map[string]string{
			{"X-RateLimit-Limit": "", "RateLimit": ""},
			{"X-RateLimit-Remaining": "", "RateLimit-Policy": ""},
			{"X-RateLimit-Limit": "", "RateLimit": "", "Retry-After": "20"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, l, ratelimit.WithHeaders(tt.style), ratelimit.WithName("api"))
			a := req{remote: "203.0.113.1:1"}
			responses := []*httptest.ResponseRecorder{f.do(a), f.do(a), f.do(a), f.do(a)}
			for i, idx := range []int{0, 2, 3} {
				for k, v := range tt.want[i] {
					if got := responses[idx].Header().Get(k); got != v {
						t.Errorf("request %d: %s = %q, want %q", idx+1, k, got, v)
					}
				}
			}
			if responses[3].Code != limited {
				t.Fatalf("fourth request: %d, want 429", responses[3].Code)
			}
		})
	}
}

func TestRetryAfterRoundsUpToAtLeastOne(t *testing.T) {
	f := newFixture(t, ratelimit.PerSecond(10).WithBurst(1)) // a token every 100 ms
	a := req{remote: "203.0.113.1:1"}
	f.do(a)
	if w := f.do(a); w.Code != limited || w.Header().Get("Retry-After") != "1" || w.Header().Get("X-RateLimit-Reset") != "1" {
		t.Fatalf("got %d, Retry-After %q, Reset %q; want 429, 1, 1", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"))
	}
	f.clock.Add(100 * time.Millisecond)
	if w := f.do(a); w.Code != ok {
		t.Fatalf("after the refill: %d, want 200", w.Code)
	}
}

func TestDenialBody(t *testing.T) {
	a := req{remote: "203.0.113.1:1"}
	f := newFixture(t, ratelimit.PerHour(1))
	f.do(a)
	w := f.do(a)
	if w.Body.String() != "Too Many Requests\n" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("default denial: %q %q", w.Header().Get("Content-Type"), w.Body.String())
	}

	f = newFixture(t, ratelimit.PerHour(1), ratelimit.WithDenyHandler(ratelimit.ProblemJSON()), ratelimit.WithName("search"))
	f.do(a)
	w = f.do(a)
	want := `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"violated-policies":["search"]}` + "\n"
	if w.Code != limited || w.Header().Get("Content-Type") != "application/problem+json" || w.Body.String() != want {
		t.Fatalf("problem denial: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}

	custom := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(limited); w.Write([]byte("slow down")) })
	f = newFixture(t, ratelimit.PerHour(1), ratelimit.WithDenyHandler(custom))
	f.do(a)
	if w = f.do(a); w.Body.String() != "slow down" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("custom denial: %q, Retry-After %q", w.Body.String(), w.Header().Get("Retry-After"))
	}
}

func TestCost(t *testing.T) {
	cost := ratelimit.WithCost(func(r *http.Request) int {
		if r.URL.Path == "/export" {
			return 3
		}
		return 1
	})
	f := newFixture(t, ratelimit.PerHour(4), cost)
	a := "203.0.113.1:1"
	got := f.codes(req{remote: a, path: "/export"}, req{remote: a, path: "/export"}, req{remote: a}, req{remote: a})
	if want := []int{ok, limited, ok, limited}; !equalInts(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}

func TestBadCostIsA500(t *testing.T) {
	var logged error
	f := newFixture(t, ratelimit.PerHour(4), ratelimit.WithCost(func(*http.Request) int { return 5 }),
		ratelimit.WithErrorHandler(func(_ *http.Request, err error) { logged = err }))
	if w := f.do(req{}); w.Code != 500 || f.served != 0 || !errors.Is(logged, ratelimit.ErrCostExceedsCapacity) {
		t.Fatalf("got %d, served %d, error %v; want 500, 0, ErrCostExceedsCapacity", w.Code, f.served, logged)
	}
}

func TestSkip(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" }))
	for range 5 {
		if w := f.do(req{path: "/healthz"}); w.Code != ok || w.Header().Get("X-RateLimit-Limit") != "" {
			t.Fatalf("health check: %d with headers %v", w.Code, w.Header())
		}
	}
	if got := f.codes(req{}, req{}); !equalInts(got, []int{ok, limited}) {
		t.Fatalf("codes %v after health checks, want [200 429]", got)
	}
}

func TestStoreErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     []ratelimit.Option
		wantCode int
	}{
		{"fail open by default", nil, ok},
		{"fail closed", []ratelimit.Option{ratelimit.WithFailClosed()}, http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged error
			opts := append(tt.opts, ratelimit.WithErrorHandler(func(_ *http.Request, err error) { logged = err }))
			l, err := ratelimit.New(failingStore{}, ratelimit.PerHour(1), opts...)
			if err != nil {
				t.Fatal(err)
			}
			served := false
			h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code != tt.wantCode || served != (tt.wantCode == ok) || !errors.Is(logged, errDown) {
				t.Fatalf("got %d, served %v, error %v", w.Code, served, logged)
			}
			if strings.Contains(w.Body.String(), errDown.Error()) {
				t.Fatal("the store's error leaked into the response")
			}
		})
	}
}

func TestNewRefusesBadConfiguration(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	tests := []struct {
		name  string
		store ratelimit.Store
		limit ratelimit.Limit
		opts  []ratelimit.Option
	}{
		{"nil store", nil, ratelimit.PerSecond(1), nil},
		{"invalid limit", mem, ratelimit.Limit{}, nil},
		{"nil key func", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithKeyFunc(nil)}},
		{"nil cost", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithCost(nil)}},
		{"nil deny handler", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithDenyHandler(nil)}},
		{"nil error handler", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithErrorHandler(nil)}},
		{"nil skip", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithSkip(nil)}},
		{"empty name", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithName("")}},
		{"name with a quote", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithName(`a"b`)}},
		{"unknown header style", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithHeaders(99)}},
		{"a breaker of no failures", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithBreaker(ratelimit.NewBreaker(0, time.Second))}},
		{"a breaker of no cool-down", mem, ratelimit.PerSecond(1), []ratelimit.Option{ratelimit.WithBreaker(ratelimit.NewBreaker(1, 0))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if l, err := ratelimit.New(tt.store, tt.limit, tt.opts...); err == nil || l != nil {
				t.Fatalf("New = %v, %v; want an error", l, err)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Middleware with an invalid limit did not panic")
		}
	}()
	ratelimit.Middleware(mem, ratelimit.Limit{})
}

func TestHeadersAreSetBeforeTheHandlerWrites(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	h := ratelimit.Middleware(mem, ratelimit.PerHour(5))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated) // headers are frozen from here on
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Fatalf("status %d, X-RateLimit-Remaining %q; want 201, 4", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestGoneClientIsNeitherServedNorReported(t *testing.T) {
	reported := false
	f := newFixture(t, ratelimit.PerHour(5), ratelimit.WithErrorHandler(func(*http.Request, error) { reported = true }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
	f.handler.ServeHTTP(httptest.NewRecorder(), r)
	if f.served != 0 || reported {
		t.Fatalf("a request whose client left: served %d times, reported %v; want neither", f.served, reported)
	}
}

func TestHandlersChangingHeadersDoNotAffectOtherResponses(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	h := ratelimit.Middleware(mem, ratelimit.PerHour(5))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(ratelimit.HeaderRemaining, "changed")
		w.Header().Add(ratelimit.HeaderLimit, "added")
	}))
	l, _ := ratelimit.New(mem, ratelimit.PerHour(5), ratelimit.WithName("probe"))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		// The limiter's own view of the next response is unchanged.
		probe := httptest.NewRecorder()
		if !l.Admit(probe, httptest.NewRequest("GET", "/", nil)) {
			t.Fatal("probe denied")
		}
		if got := probe.Header().Values(ratelimit.HeaderLimit); len(got) != 1 || got[0] != "5" {
			t.Fatalf("X-RateLimit-Limit of another response = %q after a handler added to its own", got)
		}
		if got := probe.Header().Get(ratelimit.HeaderRemaining); got == "changed" {
			t.Fatal("a handler's Set leaked into another response")
		}
	}
}

package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
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

const ok, limited = http.StatusOK, http.StatusTooManyRequests

func TestKeys(t *testing.T) {
	a := req{remote: "203.0.113.1:1000"}
	b := req{remote: "203.0.113.2:1000"}
	trusted := ratelimit.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))
	tests := []struct {
		name     string
		keyFunc  ratelimit.KeyFunc
		requests []req
		want     []int
	}{
		{"each IP has its own budget", ratelimit.KeyByIP(),
			[]req{a, a, a, b, b}, []int{ok, ok, limited, ok, ok}},
		{"X-Forwarded-For is ignored by default",
			ratelimit.KeyByIP(),
			[]req{
				{remote: "203.0.113.1:1", headers: map[string]string{"X-Forwarded-For": "1.1.1.1"}},
				{remote: "203.0.113.1:2", headers: map[string]string{"X-Forwarded-For": "2.2.2.2"}},
				{remote: "203.0.113.1:3", headers: map[string]string{"X-Real-IP": "3.3.3.3", "Forwarded": "for=4.4.4.4"}},
			}, []int{ok, ok, limited}},
		{"X-Forwarded-For is honoured through a trusted proxy, right-most untrusted hop",
			ratelimit.KeyByIP(trusted),
			[]req{
				{remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "6.6.6.6, 198.51.100.7, 10.0.0.2"}},
				{remote: "10.0.0.9:1", headers: map[string]string{"X-Forwarded-For": "7.7.7.7, 198.51.100.7"}},
				{remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "198.51.100.7"}},
				{remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "198.51.100.8"}},
			}, []int{ok, ok, limited, ok}},
		{"a forged header from an untrusted address is ignored",
			ratelimit.KeyByIP(trusted),
			[]req{
				{remote: "203.0.113.1:1", headers: map[string]string{"X-Forwarded-For": "1.1.1.1"}},
				{remote: "203.0.113.1:1", headers: map[string]string{"X-Forwarded-For": "2.2.2.2"}},
				{remote: "203.0.113.1:1", headers: map[string]string{"X-Forwarded-For": "3.3.3.3"}},
			}, []int{ok, ok, limited}},
		{"a malformed X-Forwarded-For falls back to the connection",
			ratelimit.KeyByIP(trusted),
			[]req{
				{remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "not-an-ip"}},
				{remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "1.1.1.1, ::zz"}},
				{remote: "10.0.0.1:1"},
			}, []int{ok, ok, limited}},
		{"Forwarded and a chosen header through a trusted proxy",
			ratelimit.KeyByIP(trusted, ratelimit.ClientIPHeader("CF-Connecting-IP")),
			[]req{
				{remote: "10.0.0.1:1", headers: map[string]string{"CF-Connecting-IP": "198.51.100.7"}},
				{remote: "10.0.0.2:1", headers: map[string]string{"CF-Connecting-IP": "198.51.100.7"}},
				{remote: "10.0.0.3:1", headers: map[string]string{"CF-Connecting-IP": "198.51.100.7"}},
				{remote: "203.0.113.5:1", headers: map[string]string{"CF-Connecting-IP": "198.51.100.7"}},
			}, []int{ok, ok, limited, ok}},
		{"IPv6 clients share a budget per /64",
			ratelimit.KeyByIP(),
			[]req{
				{remote: "[2001:db8:1:2::1]:1"},
				{remote: "[2001:db8:1:2:ffff::9]:1"},
				{remote: "[2001:db8:1:2::77%eth0]:1"},
				{remote: "[2001:db8:1:3::1]:1"},
			}, []int{ok, ok, limited, ok}},
		{"IPv4-mapped IPv6 counts as IPv4",
			ratelimit.KeyByIP(),
			[]req{{remote: "[::ffff:203.0.113.1]:1"}, {remote: "203.0.113.1:2"}, {remote: "203.0.113.1:3"}},
			[]int{ok, ok, limited}},
		{"unparseable addresses share one budget",
			ratelimit.KeyByIP(),
			[]req{{remote: "@"}, {remote: "garbage"}, {remote: "/tmp/sock"}},
			[]int{ok, ok, limited}},
		{"per API key",
			ratelimit.KeyByHeader("X-API-Key"),
			[]req{
				{remote: "203.0.113.1:1", headers: map[string]string{"X-API-Key": "k1"}},
				{remote: "203.0.113.2:1", headers: map[string]string{"X-API-Key": "k1"}},
				{remote: "203.0.113.3:1", headers: map[string]string{"X-API-Key": "k1"}},
				{remote: "203.0.113.3:1", headers: map[string]string{"X-API-Key": "k2"}},
			}, []int{ok, ok, limited, ok}},
		{"a missing API key is a 400, never a pass",
			ratelimit.KeyByHeader("X-API-Key"),
			[]req{a, a, a}, []int{400, 400, 400}},
		{"API key, else IP",
			ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP()),
			[]req{a, a, a, {remote: "203.0.113.1:1", headers: map[string]string{"X-API-Key": "k"}}},
			[]int{ok, ok, limited, ok}},
		{"an API key equal to an address does not spend that address's budget",
			ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP()),
			[]req{
				{remote: "198.51.100.1:1", headers: map[string]string{"X-API-Key": "ip:203.0.113.1"}},
				{remote: "198.51.100.1:1", headers: map[string]string{"X-API-Key": "ip:203.0.113.1"}},
				a,
			}, []int{ok, ok, ok}},
		{"per route and IP, where outside a ServeMux every path is one route",
			ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.KeyByIP()),
			[]req{{remote: a.remote, path: "/x"}, {remote: a.remote, path: "/x"}, {remote: a.remote, path: "/y"}, {remote: a.remote, path: "/x"}, {remote: b.remote, path: "/x"}},
			[]int{ok, ok, limited, limited, ok}},
		{"a missing user is a 401",
			ratelimit.KeyByContext(userKey{}),
			[]req{a}, []int{401}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, ratelimit.PerHour(2), ratelimit.WithKeyFunc(tt.keyFunc))
			if got := f.codes(tt.requests...); !equalInts(got, tt.want) {
				t.Fatalf("status codes %v, want %v (store keys %q)", got, tt.want, f.store.keys)
			}
			wantServed := 0
			for _, c := range tt.want {
				if c == ok {
					wantServed++
				}
			}
			if f.served != wantServed {
				t.Fatalf("handler ran %d times, want %d: it must never run on a 429", f.served, wantServed)
			}
		})
	}
}

type userKey struct{}

func TestKeyByContext(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByContext(userKey{})))
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, r.Header.Get("User"))))
		})
	}
	f.handler = auth(f.handler)
	got := f.codes(req{headers: map[string]string{"User": "alice"}}, req{headers: map[string]string{"User": "alice"}},
		req{headers: map[string]string{"User": "bob"}}, req{})
	if want := []int{ok, limited, ok, 401}; !equalInts(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}

func TestKeyErrorNamesWhatIsMissing(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("x-api-key")))
	w := f.do(req{})
	if w.Code != 400 || strings.TrimSpace(w.Body.String()) != "missing X-Api-Key header" {
		t.Fatalf("got %d %q, want 400 \"missing X-Api-Key header\"", w.Code, w.Body.String())
	}
	if len(f.store.keys) != 0 {
		t.Fatalf("the store was called for a request without a key: %q", f.store.keys)
	}
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

	f = newFixture(t, ratelimit.PerHour(1), ratelimit.WithProblemJSON(), ratelimit.WithName("search"))
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
		ratelimit.WithErrorHandler(func(_ http.ResponseWriter, _ *http.Request, err error) { logged = err }))
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
			opts := append(tt.opts, ratelimit.WithErrorHandler(func(_ http.ResponseWriter, _ *http.Request, err error) { logged = err }))
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

func TestLongKeysAreHashed(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")), ratelimit.WithName("api"))
	long := strings.Repeat("k", 100_000)
	got := f.codes(req{headers: map[string]string{"X-API-Key": long}}, req{headers: map[string]string{"X-API-Key": long}},
		req{headers: map[string]string{"X-API-Key": long + "x"}})
	if !equalInts(got, []int{ok, limited, ok}) {
		t.Fatalf("codes %v, want [200 429 200]", got)
	}
	for _, k := range f.store.keys {
		if len(k) > ratelimit.MaxKeyLen {
			t.Fatalf("store got a key of %d bytes", len(k))
		}
	}
}

func TestHeadersNeverEchoRequestData(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")), ratelimit.WithHeaders(ratelimit.HeadersBoth))
	secret := "sk-live-0123456789"
	for range 2 {
		w := f.do(req{remote: "203.0.113.77:1", headers: map[string]string{"X-API-Key": secret}})
		for k, vs := range w.Header() {
			for _, v := range vs {
				if strings.Contains(v, secret) || strings.Contains(v, "203.0.113.77") {
					t.Fatalf("header %s echoes request data: %q", k, v)
				}
			}
		}
	}
}

func TestNamesSeparateBudgets(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	a, _ := ratelimit.New(mem, ratelimit.PerHour(1), ratelimit.WithName("a"))
	b, _ := ratelimit.New(mem, ratelimit.PerHour(1), ratelimit.WithName("b"))
	r := httptest.NewRequest("GET", "/", nil)
	for _, l := range []*ratelimit.Limiter{a, b} {
		if res, err := l.Check(r); err != nil || !res.Allowed {
			t.Fatalf("first request through each named limiter: %+v %v", res, err)
		}
	}
	if res, _ := a.Check(r); res.Allowed {
		t.Fatal("second request through a allowed at 1/h")
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
	f := newFixture(t, ratelimit.PerHour(5), ratelimit.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) { reported = true }))
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

func TestKeyErrorWithoutAClientStatusIsA400(t *testing.T) {
	for _, status := range []int{0, 200, 503, 99999} {
		kf := func(*http.Request) (string, error) {
			return "", &ratelimit.MissingKeyError{What: "tenant", Status: status}
		}
		f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(kf))
		if w := f.do(req{}); w.Code != 400 || strings.TrimSpace(w.Body.String()) != "missing tenant" {
			t.Fatalf("MissingKeyError with status %d: %d %q, want 400 \"missing tenant\"", status, w.Code, w.Body.String())
		}
	}
	kf := func(*http.Request) (string, error) { return "", errors.New("secret detail") }
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithKeyFunc(kf))
	if w := f.do(req{}); w.Code != 400 || strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("a KeyFunc's own error: %d %q, want 400 without its text", w.Code, w.Body.String())
	}
}

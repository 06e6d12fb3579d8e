package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const ok, limited = http.StatusOK, http.StatusTooManyRequests

func TestKeys(t *testing.T) {
	a := req{remote: "203.0.113.1:1000"}
	b := req{remote: "203.0.113.2:1000"}
	trusted := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))
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
			ratelimit.KeyByIP(trusted, clientip.Header("CF-Connecting-IP")),
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

type (
	numericID int64
	userName  string
	accounts  uint16
	stringer  struct{ id int }
)

func (s stringer) String() string { return "s" + strconv.Itoa(s.id) }

// TestKeyByContextKeysNamedTypes: a user id of a named type, with or
// without a String method, keys its own budget instead of getting a 401.
func TestKeyByContextKeysNamedTypes(t *testing.T) {
	key := ratelimit.KeyByContext(userKey{})
	for _, tt := range []struct {
		value any
		want  string
	}{
		{"alice", "user:alice"},
		{42, "user:42"},
		{int64(-7), "user:-7"},
		{numericID(42), "user:42"},
		{userName("bob"), "user:bob"},
		{accounts(9), "user:9"},
		{stringer{3}, "user:s3"},
		{userName(""), ""},
		{3.5, ""},
		{nil, ""},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r = r.WithContext(context.WithValue(r.Context(), userKey{}, tt.value))
		got, err := key(r)
		if got != tt.want || (tt.want == "") != errors.Is(err, ratelimit.ErrMissingKey) {
			t.Errorf("%T %v: key %q, %v; want %q", tt.value, tt.value, got, err, tt.want)
		}
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
	ctx := context.Background()
	for _, l := range []*ratelimit.Limiter{a, b} {
		if res, err := l.Allow(ctx, "ip:192.0.2.1"); err != nil || !res.Allowed {
			t.Fatalf("first request through each named limiter: %+v %v", res, err)
		}
	}
	if res, _ := a.Allow(ctx, "ip:192.0.2.1"); res.Allowed {
		t.Fatal("second request through a allowed at 1/h")
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

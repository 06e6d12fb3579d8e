package ratelimit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// sharedStore is the memory store posing as a store that other processes
// share (not Local, as Redis), recording the keys it is asked about.
type sharedStore struct {
	*memory.Store
	mu   sync.Mutex
	keys []string
}

func newSharedStore(t *testing.T) *sharedStore {
	s := &sharedStore{Store: memory.New()}
	t.Cleanup(func() { s.Close() })
	return s
}

func (s *sharedStore) Local() bool { return false }

func (s *sharedStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.record(key)
	return s.Store.AllowN(ctx, key, l, n)
}

func (s *sharedStore) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	for _, t := range takes {
		s.record(t.Key)
	}
	return s.Store.AllowAll(ctx, takes, results)
}

func (s *sharedStore) record(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, key)
}

func (s *sharedStore) lastKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) == 0 {
		return ""
	}
	return s.keys[len(s.keys)-1]
}

var secret = []byte("0123456789abcdef0123456789abcdef")

func newLimiter(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(store, limit, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func apiKeyRequest(key string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", key)
	return r
}

// TestKeyCacheHoldsNoRequestKey: 500 requests with distinct 64 KB API
// keys (1,000 with RATELIMIT_SLOW_TESTS) leave the heap within a few MB of
// where it was; a cache that kept the request keys would hold over 30 MB.
func TestKeyCacheHoldsNoRequestKey(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l := newLimiter(t, store, ratelimit.PerHour(10), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))
	tail := strings.Repeat("k", 64<<10)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	r := apiKeyRequest("")
	requests := sized(1000, 500)
	for i := range requests {
		r.Header.Set("X-API-Key", strconv.Itoa(i)+tail)
		if res, err := l.Check(r); err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v %v", i, res, err)
		}
	}
	r = nil
	after := heap()
	runtime.KeepAlive(l)
	if grown := int64(after) - int64(before); grown > 16<<20 {
		t.Fatalf("the heap grew by %d MB over %d requests with 64 KB keys; want the limiter's memory bounded whatever the key sizes", grown>>20, requests)
	}
}

func TestRequestKeysReachASharedStoreOnlyAsAKeyedHash(t *testing.T) {
	const apiKey = "sk-live-0123456789"
	tests := []struct {
		name  string
		key   ratelimit.KeyFunc
		req   func() *http.Request
		plain string // the client part expected in plain text; "" for a hash
	}{
		{"an API key", ratelimit.KeyByHeader("X-API-Key"), func() *http.Request { return apiKeyRequest(apiKey) }, ""},
		{"a header named Route", ratelimit.KeyByHeader("Route"), func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Route", "/"+apiKey)
			return r
		}, ""},
		{"a user from the context", ratelimit.KeyByContext(userKey{}), func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			return r.WithContext(context.WithValue(r.Context(), userKey{}, apiKey))
		}, ""},
		{"a KeyFunc of one's own", func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil },
			func() *http.Request { return apiKeyRequest(apiKey) }, ""},
		{"an address with an API key", ratelimit.Compose(ratelimit.KeyByIP(), ratelimit.KeyByHeader("X-API-Key")),
			func() *http.Request { return apiKeyRequest(apiKey) }, ""},
		{"an address stays readable", ratelimit.KeyByIP(), func() *http.Request { return apiKeyRequest(apiKey) }, "ip:192.0.2.1"},
		{"a route and an address stay readable", ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.KeyByIP()),
			func() *http.Request { return apiKeyRequest(apiKey) }, "route:unmatched|ip:192.0.2.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys []string
			for _, s := range [][]byte{secret, secret, []byte("another secret of 32 bytes......")} {
				store := newSharedStore(t)
				l := newLimiter(t, store, ratelimit.PerHour(5), ratelimit.WithName("api"), ratelimit.WithKeyFunc(tt.key), ratelimit.WithKeySecret(s))
				if res, err := l.Check(tt.req()); err != nil || !res.Allowed {
					t.Fatalf("Check: %+v %v", res, err)
				}
				keys = append(keys, store.lastKey())
			}
			if tt.plain != "" {
				if keys[0] != "api/"+tt.plain || keys[2] != keys[0] {
					t.Fatalf("store keys %q, want %q", keys, "api/"+tt.plain)
				}
				return
			}
			client, ok := strings.CutPrefix(keys[0], "api/h:")
			if !ok || len(client) != 22 || strings.Contains(keys[0], apiKey) {
				t.Fatalf("store key %q, want api/h: and 22 characters of a keyed hash", keys[0])
			}
			if keys[1] != keys[0] {
				t.Fatalf("two instances with one secret made %q and %q: they would not share the budget", keys[0], keys[1])
			}
			if keys[2] == keys[0] {
				t.Fatalf("another secret made the same key %q: the hash is not keyed", keys[0])
			}
		})
	}
}

func TestRequestKeysWithoutASecret(t *testing.T) {
	t.Run("New refuses a KeyFunc of its own on a shared store", func(t *testing.T) {
		store := newSharedStore(t)
		for _, opt := range []ratelimit.Option{
			ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "per-key", Limit: ratelimit.PerHour(5), Key: ratelimit.KeyByHeader("X-API-Key")}),
		} {
			if _, err := ratelimit.New(store, ratelimit.PerHour(5), opt); !errors.Is(err, ratelimit.ErrBadConfig) {
				t.Errorf("New: %v, want ErrBadConfig", err)
			}
		}
		if len(store.keys) != 0 {
			t.Fatalf("the store got %q", store.keys)
		}
	})
	t.Run("a key given at the call is answered 500 and never reaches a shared store", func(t *testing.T) {
		store := newSharedStore(t)
		var got error
		l := newLimiter(t, store, ratelimit.PerHour(5),
			ratelimit.WithErrorHandler(func(_ *http.Request, err error) { got = err }))
		w := httptest.NewRecorder()
		if l.AdmitWithKeyFunc(w, apiKeyRequest("sk-live-1"), ratelimit.KeyByHeader("X-API-Key")) || w.Code != http.StatusInternalServerError {
			t.Fatalf("admitted or answered %d, want 500", w.Code)
		}
		if !errors.Is(got, ratelimit.ErrBadConfig) || len(store.keys) != 0 {
			t.Fatalf("error handler got %v, store got %q; want ErrBadConfig and no call", got, store.keys)
		}
		// Addresses need no secret.
		ip := newLimiter(t, store, ratelimit.PerHour(5))
		if res, err := ip.Check(apiKeyRequest("sk-live-1")); err != nil || !res.Allowed {
			t.Fatalf("an address key without a secret: %+v %v", res, err)
		}
	})
	t.Run("WithPlainKeys keeps the key as it is", func(t *testing.T) {
		store := newSharedStore(t)
		l := newLimiter(t, store, ratelimit.PerHour(5), ratelimit.WithName("api"), ratelimit.WithKeySecret(secret),
			ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Tenant")), ratelimit.WithPlainKeys())
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Tenant", "acme")
		if _, err := l.Check(r); err != nil || store.lastKey() != "api/x-tenant:acme" {
			t.Fatalf("store key %q (%v), want api/x-tenant:acme", store.lastKey(), err)
		}
	})
	t.Run("a short secret is refused", func(t *testing.T) {
		if _, err := ratelimit.New(newSharedStore(t), ratelimit.PerHour(1), ratelimit.WithKeySecret([]byte("short"))); err == nil {
			t.Fatal("New took a 5-byte secret")
		}
	})
}

// TestKeysOnALocalStore: a Local store, in the process's memory, gets keys
// as they are, with no keyed hash, unless the limiter is given a secret;
// a long key is bounded, and a key that looks like a bounded one is
// hashed too, so that no client can take a long key's budget.
func TestKeysOnALocalStore(t *testing.T) {
	long := "x-api-key:" + strings.Repeat("k", 200)
	longSum := sha256.Sum256([]byte(long))
	bounded := "sha256:" + hex.EncodeToString(longSum[:]) // the store key part of long
	tests := []struct {
		name string
		key  string
		opts []ratelimit.Option
		want func(t *testing.T, storeKey string)
	}{
		{"an API key is kept as it is", "sk-live-1", nil, func(t *testing.T, k string) {
			if k != "api/x-api-key:sk-live-1" {
				t.Fatalf("store key %q, want api/x-api-key:sk-live-1", k)
			}
		}},
		{"a long key is bounded", strings.Repeat("k", 200), nil, func(t *testing.T, k string) {
			if k != "api/"+bounded {
				t.Fatalf("store key %q, want api/%s", k, bounded)
			}
		}},
		{"a key that looks bounded is hashed", bounded[len("sha256:"):], []ratelimit.Option{
			ratelimit.WithKeyFunc(func(r *http.Request) (string, error) { return "sha256:" + r.Header.Get("X-API-Key"), nil })},
			func(t *testing.T, k string) {
				if k == "api/"+bounded || !strings.HasPrefix(k, "api/sha256:") || len(k) != len("api/")+len(bounded) {
					t.Fatalf("store key %q, want api/sha256: and another hash than %q's", k, bounded)
				}
			}},
		{"WithKeySecret hashes", "sk-live-1", []ratelimit.Option{ratelimit.WithKeySecret(secret)}, func(t *testing.T, k string) {
			if !strings.HasPrefix(k, "api/h:") || strings.Contains(k, "sk-live") {
				t.Fatalf("store key %q, want a keyed hash", k)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			f := &keyRecorder{Store: mem}
			opts := append([]ratelimit.Option{ratelimit.WithName("api"), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key"))}, tt.opts...)
			l := newLimiter(t, f, ratelimit.PerHour(1), opts...)
			for i, want := range []bool{true, false} {
				if res, err := l.Check(apiKeyRequest(tt.key)); err != nil || res.Allowed != want {
					t.Fatalf("request %d: %+v %v, want allowed %v", i+1, res, err, want)
				}
			}
			if len(f.keys) != 2 || f.keys[0] != f.keys[1] {
				t.Fatalf("store keys %q, want one key twice", f.keys)
			}
			tt.want(t, f.keys[0])
		})
	}
}

// TestPoliciesOfOneClientShareTheirClientPart: whatever the key's length,
// the part of each policy's store key after the namespace is the same, so
// the Redis store puts a client's budgets in one Cluster slot.
func TestPoliciesOfOneClientShareTheirClientPart(t *testing.T) {
	for _, n := range []int{10, ratelimit.MaxKeyLen, 200, 100_000} {
		t.Run(strconv.Itoa(n)+" bytes", func(t *testing.T) {
			store := newSharedStore(t)
			key := strings.Repeat("k", n)
			kf := func(*http.Request) (string, error) { return key, nil }
			l := newLimiter(t, store, ratelimit.PerSecond(10), ratelimit.WithName("api"), ratelimit.WithKeyFunc(kf),
				ratelimit.WithKeySecret(secret), ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(100)}))
			if _, err := l.Check(httptest.NewRequest("GET", "/", nil)); err != nil {
				t.Fatal(err)
			}
			if len(store.keys) != 2 {
				t.Fatalf("store keys %q, want one per policy", store.keys)
			}
			a, b := store.keys[0], store.keys[1]
			ns1, c1, _ := strings.Cut(a, "/")
			ns2, c2, _ := strings.Cut(b, "/")
			if ns1 != "api" || ns2 != "api#hourly" || c1 != c2 || len(c1) > ratelimit.MaxKeyLen {
				t.Fatalf("store keys %q and %q: want namespaces api and api#hourly before one bounded client part", a, b)
			}
		})
	}
}

func TestUnnamedLimitersNeverShareABudget(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	for _, tt := range []struct {
		name   string
		store  func(t *testing.T) ratelimit.Store
		limits [2]ratelimit.Limit
	}{
		{"memory, one limit", func(t *testing.T) ratelimit.Store { return newMemory(t) }, [2]ratelimit.Limit{ratelimit.PerHour(1), ratelimit.PerHour(1)}},
		{"memory, two limits", func(t *testing.T) ratelimit.Store { return newMemory(t) }, [2]ratelimit.Limit{ratelimit.PerHour(1), ratelimit.PerHour(2)}},
		{"shared, two limits", func(t *testing.T) ratelimit.Store { return newSharedStore(t) }, [2]ratelimit.Limit{ratelimit.PerHour(1), ratelimit.PerHour(2)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := tt.store(t)
			a, b := newLimiter(t, store, tt.limits[0]), newLimiter(t, store, tt.limits[1])
			if res, _ := a.Check(r); !res.Allowed {
				t.Fatal("first request through a denied")
			}
			for i := range tt.limits[1].Rate {
				if res, _ := b.Check(r); !res.Allowed {
					t.Fatalf("request %d through b denied: a's request took from b's budget", i+1)
				}
			}
		})
	}
	t.Run("instances of one unnamed limiter on a shared store share it", func(t *testing.T) {
		store := newSharedStore(t)
		a, b := newLimiter(t, store, ratelimit.PerHour(1)), newLimiter(t, store, ratelimit.PerHour(1))
		if res, _ := a.Check(r); !res.Allowed {
			t.Fatal("first request denied")
		}
		if res, _ := b.Check(r); res.Allowed {
			t.Fatal("the second instance of the limiter gave the client a budget of its own")
		}
	})
}

func newMemory(t *testing.T) *memory.Store {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPlainKeysAreCachedOnlyOnALocalStore: a key kept as it is reaches the
// store as the namespace and the key on every store; a Local store's
// limiter caches it (a returning key allocates nothing), a shared store's
// joins it on every decision (its misses would cost more than the join),
// and a key it hashes is cached on both.
func TestPlainKeysAreCachedOnlyOnALocalStore(t *testing.T) {
	limit := ratelimit.PerMinute(100)
	long := strings.Repeat("x", ratelimit.MaxKeyLen+1)
	for _, tt := range []struct {
		name   string
		store  func() ratelimit.Store
		key    string
		want   string // the store key; "" for a bound one
		cached int
	}{
		{"Local, plain", func() ratelimit.Store { return memory.New() }, "user-1", "n/user-1", 1},
		{"shared, plain", func() ratelimit.Store { return &remoteStore{Store: memory.New()} }, "user-1", "n/user-1", 0},
		{"shared, too long", func() ratelimit.Store { return &remoteStore{Store: memory.New()} }, long, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &keyRecorder{Store: tt.store()}
			l, err := ratelimit.New(rec, limit, ratelimit.WithName("n"), ratelimit.WithPlainKeys())
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := l.Allow(context.Background(), tt.key); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range rec.keys {
				if tt.want != "" && k != tt.want || tt.want == "" && !strings.HasPrefix(k, "n/sha256:") {
					t.Fatalf("store keys %q, want each %q", rec.keys, tt.want)
				}
			}
			if got := ratelimit.KeyCacheLen(l, 0); got != tt.cached {
				t.Fatalf("%d keys cached, want %d", got, tt.cached)
			}
		})
	}
}

package inflight_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func newExportLimit(t *testing.T, slots *memory.Slots, opts ...inflight.Option) *inflight.Limiter {
	t.Helper()
	f, err := inflight.New(slots, 2, append([]inflight.Option{inflight.WithName("export"),
		inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key"))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func keyed(key string) *http.Request {
	r := httptest.NewRequest("GET", "/export", nil)
	r.Header.Set("X-Key", key)
	return r
}

func TestInFlightLimitsRunningRequests(t *testing.T) {
	slots := memory.NewSlots()
	f := newExportLimit(t, slots)
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		started <- struct{}{}
		<-release
	}))
	done := make(chan struct{}, 2)
	for range 2 {
		go func() { h.ServeHTTP(httptest.NewRecorder(), keyed("a")); done <- struct{}{} }()
	}
	<-started
	<-started
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, keyed("a"))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
		rec.Header().Get("X-Ratelimit-Limit") != "2" || rec.Header().Get("X-Ratelimit-Remaining") != "0" {
		t.Fatalf("a third request: %d %v; want 429 with Retry-After 1, limit 2, remaining 0", rec.Code, rec.Header())
	}
	other := httptest.NewRecorder()
	go func() { <-started }()
	f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(other, keyed("b"))
	if other.Code != http.StatusOK || other.Header().Get("X-Ratelimit-Remaining") != "1" {
		t.Fatalf("another key: %d, remaining %q; want 200 and 1", other.Code, other.Header().Get("X-Ratelimit-Remaining"))
	}
	close(release)
	<-done
	<-done
	rec = httptest.NewRecorder()
	f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, keyed("a"))
	if rec.Code != http.StatusOK {
		t.Fatalf("after the handlers returned: %d, want 200", rec.Code)
	}
}

func TestInFlightReleasesOnPanic(t *testing.T) {
	slots := memory.NewSlots()
	f := newExportLimit(t, slots)
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	for range 3 { // more than the limit: each panic gave its slot back
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the panic did not go through")
				}
			}()
			h.ServeHTTP(httptest.NewRecorder(), keyed("a"))
		}()
	}
}

func TestInFlightCombinesWithRateLimits(t *testing.T) {
	store, slots := memory.New(), memory.NewSlots()
	defer store.Close()
	rl, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key")))
	if err != nil {
		t.Fatal(err)
	}
	h := rl.Handler(newExportLimit(t, slots).Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	codes := []int{}
	for range 2 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, keyed("a"))
		codes = append(codes, rec.Code)
	}
	if codes[0] != http.StatusOK || codes[1] != http.StatusTooManyRequests {
		t.Fatalf("codes %v, want [200 429]: the rate limit applies before the in-flight one", codes)
	}
}

func ExampleNew() {
	// At most 2 report exports of one API key at once; the Redis store's
	// slots also expire when an instance dies.
	exports, _ := inflight.New(memory.NewSlots(), 2,
		inflight.WithName("export"), inflight.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))
	handler := exports.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "report")
	}))
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/export", nil)
	r.Header.Set("X-API-Key", "k1")
	handler.ServeHTTP(rec, r)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output: 200 report
}

// slotKeyRecorder is a Store that records the keys it is given.
type slotKeyRecorder struct{ keys []string }

func (k *slotKeyRecorder) Acquire(_ context.Context, key string, _ int, _ time.Duration) (inflight.Slot, error) {
	k.keys = append(k.keys, key)
	return inflight.Slot{Acquired: true, ID: "1", Running: 1}, nil
}
func (*slotKeyRecorder) Renew(context.Context, string, inflight.Slot, time.Duration) error {
	return nil
}
func (*slotKeyRecorder) Release(context.Context, string, inflight.Slot) error { return nil }

// A client's key reaches the slot store as a Limiter's does: a keyed hash,
// bounded in length however long the header, never in plain text; on a
// shared store, a KeyFunc of its own needs WithKeySecret, since an unkeyed
// hash of an API key can be checked against a list of likely keys.
func TestInFlightKeysAreHashed(t *testing.T) {
	if _, err := inflight.New(&slotKeyRecorder{}, 1, inflight.WithName("export"),
		inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key"))); !errors.Is(err, ratelimit.ErrBadConfig) {
		t.Fatalf("NewInFlight on a shared store without a secret: %v, want ErrBadConfig", err)
	}
	for _, secret := range [][]byte{[]byte("sixteen byte secret!"), []byte("another 16-byte secret")} {
		rec := &slotKeyRecorder{}
		f, err := inflight.New(rec, 1, inflight.WithName("export"),
			inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), inflight.WithKeySecret(secret))
		if err != nil {
			t.Fatal(err)
		}
		h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		for _, key := range []string{"api-key-secret-1", strings.Repeat("x", 4000)} {
			h.ServeHTTP(httptest.NewRecorder(), keyed(key))
		}
		if len(rec.keys) != 2 {
			t.Fatalf("%d keys reached the store, want 2", len(rec.keys))
		}
		for _, k := range rec.keys {
			if len(k) != len("export/h:")+22 || !strings.HasPrefix(k, "export/h:") || strings.Contains(k, "api-key") || strings.Contains(k, "xxxx") {
				t.Fatalf("store key %q: want export/h: and 22 characters of a keyed hash", k)
			}
		}
		if rec.keys[0] == rec.keys[1] {
			t.Fatal("two keys share a store key")
		}
	}
}

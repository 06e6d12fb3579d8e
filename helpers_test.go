package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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

func (failingStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, errDown
}

var errDown = errors.New("store down")

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

type req struct {
	remote  string
	headers map[string]string
	path    string
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

// tally counts an observer's decisions by outcome and source.
type tally struct {
	mu       sync.Mutex
	outcomes map[ratelimit.Outcome]int
	sources  map[ratelimit.Source]int
	keys     []string
}

func newTally() *tally {
	return &tally{outcomes: map[ratelimit.Outcome]int{}, sources: map[ratelimit.Source]int{}}
}

func (t *tally) observer(keys bool) ratelimit.Observer {
	return ratelimit.Observer{Keys: keys, Decision: func(d ratelimit.Decision) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.outcomes[d.Outcome]++
		t.sources[d.Source]++
		if d.Key != "" {
			t.keys = append(t.keys, d.Key)
		}
	}}
}

// countingStore counts the calls that reach its store.
type countingStore struct {
	ratelimit.Store
	calls atomic.Int64
}

func (c *countingStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	c.calls.Add(1)
	return c.Store.AllowN(ctx, key, l, n)
}

// remoteStore wraps a store as a remote one would behave: not Local (so a
// limiter gives it a time budget, a breaker and a deny cache), checking
// its arguments first and then its context, as the Redis store and
// go-redis do, and failing while down. It counts the calls that reach it.
type remoteStore struct {
	ratelimit.Store
	down  atomic.Bool
	calls atomic.Int64
}

func (s *remoteStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	if err := ratelimit.ValidateCall(key, l, n); err != nil {
		return ratelimit.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	if s.down.Load() {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

// headerWriter is a minimal ResponseWriter, reused between requests so that
// the benchmarks measure the middleware, not the recorder.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header { return w.h }

func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w *headerWriter) WriteHeader(int) {}

// hangingStore never answers, like a Redis stopped with SIGSTOP.
type hangingStore struct{}

func (hangingStore) AllowN(ctx context.Context, _ string, _ ratelimit.Limit, _ int) (ratelimit.Result, error) {
	<-ctx.Done()
	return ratelimit.Result{}, ctx.Err()
}

// serveTimes sends n GET requests for path to h and prints each status.
func serveTimes(h http.Handler, n int, path string, header ...string) {
	codes := make([]string, n)
	for i := range codes {
		r := httptest.NewRequest("GET", path, nil)
		for j := 0; j+1 < len(header); j += 2 {
			r.Header.Set(header[j], header[j+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		codes[i] = fmt.Sprint(w.Code)
	}
	fmt.Println(strings.Join(codes, " "))
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })

type downStore struct{}

func (downStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, errors.New("connection refused")
}

// blockingStore never answers until release is closed, whatever its
// context says, like a client that ignores contexts in front of a Redis
// stopped with SIGSTOP; onCall, if set, runs as each call starts. It is
// not Local, so limiters give it the defaults of a remote store.
type blockingStore struct {
	release chan struct{}
	onCall  func()
}

func (s *blockingStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	if s.onCall != nil {
		s.onCall()
	}
	<-s.release
	return ratelimit.Result{}, errDown
}

// serveStatus sends one GET / with ctx through l and returns the status.
func serveStatus(l *ratelimit.Limiter, ctx context.Context) int {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	w := httptest.NewRecorder()
	l.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })).ServeHTTP(w, r)
	return w.Code
}

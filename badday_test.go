package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// scriptedStore answers with its current error, or from its inner store,
// and counts its calls. It is not Local, so limiters get the defaults of a
// remote store.
type scriptedStore struct {
	inner Store
	calls atomic.Int64
	mu    sync.Mutex
	err   error
	block chan struct{} // if set, calls wait on it, ignoring their context
}

func (s *scriptedStore) setErr(err error) { s.mu.Lock(); s.err = err; s.mu.Unlock() }

func (s *scriptedStore) AllowN(ctx context.Context, key string, l Limit, n int) (Result, error) {
	s.calls.Add(1)
	s.mu.Lock()
	err, block := s.err, s.block
	s.mu.Unlock()
	if block != nil {
		<-block
	}
	if err != nil {
		return Result{}, err
	}
	if s.inner == nil {
		return Result{}, errStoreDown
	}
	return s.inner.AllowN(ctx, key, l, n)
}

// allowAll allows everything.
type allowAll struct{}

func (allowAll) AllowN(_ context.Context, _ string, l Limit, _ int) (Result, error) {
	return Result{Allowed: true, Limit: l, Remaining: l.Capacity()}, nil
}

var errStoreDown = errors.New("store down")

// serve sends one GET / from addr through l and reports the status.
func serve(l *Limiter, ctx context.Context) int {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	w := httptest.NewRecorder()
	l.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })).ServeHTTP(w, r)
	return w.Code
}

func TestTimeoutBoundsAHangingStore(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []Option
		want int
	}{
		{"fail open serves the request", nil, http.StatusOK},
		{"fail closed answers 503", []Option{WithFailClosed()}, http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := &scriptedStore{block: make(chan struct{})}
			defer close(store.block)
			var told []error
			l, err := New(store, PerMinute(10), append(tt.opts, WithTimeout(10*time.Millisecond),
				WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))...)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code := serve(l, context.Background())
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("a hanging store held the request %v, want about the 10ms budget", took)
			}
			if code != tt.want {
				t.Errorf("status %d, want %d", code, tt.want)
			}
			if len(told) != 1 || !errors.Is(told[0], ErrTimeout) || !errors.Is(told[0], context.DeadlineExceeded) {
				t.Errorf("error handler told %v, want one ErrTimeout that is a DeadlineExceeded", told)
			}
		})
	}
}

func TestRequestDeadlineIsAStoreFailure(t *testing.T) {
	// The server's deadline on the request ran out while the store was
	// called: the failure policy answers, never an empty 200.
	store := &scriptedStore{block: make(chan struct{})}
	defer close(store.block)
	var told int
	l, err := New(store, PerMinute(10), WithFailClosed(), WithTimeout(time.Minute),
		WithErrorHandler(func(*http.Request, error) { told++ }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if code := serve(l, ctx); code != http.StatusServiceUnavailable || told != 1 {
		t.Errorf("status %d with the error handler told %d times, want 503 and 1", code, told)
	}
}

func TestGoneClientIsNotServedNorReportedNorCountedByTheBreaker(t *testing.T) {
	store := &scriptedStore{block: make(chan struct{})}
	defer close(store.block)
	var told int
	b := NewBreaker(1, time.Minute)
	l, err := New(store, PerMinute(10), WithBreaker(b),
		WithErrorHandler(func(*http.Request, error) { told++ }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, cancel)
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if l.Admit(httptest.NewRecorder(), r) {
		t.Error("a request whose client went away was admitted")
	}
	if told != 0 || b.State() != BreakerClosed {
		t.Errorf("error handler told %d times, breaker %v; want 0 and closed", told, b.State())
	}
}

func TestBreakerCostsOneCallPerCoolDown(t *testing.T) {
	clock := newTestClock()
	store := &scriptedStore{inner: allowAll{}}
	store.setErr(errStoreDown)
	var changes []BreakerState
	l, err := New(store, PerMinute(1000), WithBreaker(NewBreaker(3, time.Second)),
		WithObserver(Observer{BreakerChange: func(_ string, s BreakerState) { changes = append(changes, s) }}),
		WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	l.now = clock.Now
	for range 100 {
		if code := serve(l, context.Background()); code != http.StatusOK {
			t.Fatalf("status %d, want 200 (fail open)", code)
		}
	}
	if got := store.calls.Load(); got != 3 {
		t.Fatalf("100 requests during an outage called the store %d times, want 3 (then the breaker opens)", got)
	}
	clock.Add(999 * time.Millisecond)
	serve(l, context.Background())
	if got := store.calls.Load(); got != 3 {
		t.Fatalf("the store was called during the cool-down (%d calls)", got)
	}
	clock.Add(time.Millisecond)
	serve(l, context.Background()) // the probe fails: open again
	serve(l, context.Background())
	if got, state := store.calls.Load(), l.Breaker().State(); got != 4 || state != BreakerOpen {
		t.Fatalf("after the cool-down: %d calls, breaker %v; want 4 (one probe) and open", got, state)
	}
	store.setErr(nil)
	clock.Add(time.Second)
	for range 10 {
		serve(l, context.Background())
	}
	if got, state := store.calls.Load(), l.Breaker().State(); got != 14 || state != BreakerClosed {
		t.Fatalf("after recovery: %d calls, breaker %v; want 14 and closed", got, state)
	}
	want := []BreakerState{BreakerOpen, BreakerHalfOpen, BreakerOpen, BreakerHalfOpen, BreakerClosed}
	if len(changes) != len(want) {
		t.Fatalf("state changes %v, want %v", changes, want)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Fatalf("state changes %v, want %v", changes, want)
		}
	}
}

func TestBreakerProbesOneAtATime(t *testing.T) {
	clock := newTestClock()
	b := NewBreaker(1, time.Second)
	b.failure(clock.Now(), false)
	clock.Add(time.Second)
	ok, probe := b.allow(clock.Now())
	if !ok || !probe {
		t.Fatalf("after the cool-down allow = %v, %v; want a probe", ok, probe)
	}
	if ok, _ := b.allow(clock.Now()); ok {
		t.Fatal("a second call went to the store while the probe was in flight")
	}
	b.release(probe) // the probe's client went away
	if ok, probe := b.allow(clock.Now()); !ok || !probe {
		t.Fatal("after a released probe, the next call does not probe")
	}
}

func TestThrottledLogWritesOncePerSecondWithTheCount(t *testing.T) {
	var tl throttledLog
	clock := newTestClock()
	if ok, _ := tl.allow(clock.Now()); !ok {
		t.Fatal("the first event was not logged")
	}
	for range 99 {
		clock.Add(time.Millisecond)
		if ok, _ := tl.allow(clock.Now()); ok {
			t.Fatal("an event within the second was logged")
		}
	}
	clock.Add(time.Second)
	if ok, n := tl.allow(clock.Now()); !ok || n != 99 {
		t.Fatalf("after a second: logged %v with %d suppressed, want true and 99", ok, n)
	}
}

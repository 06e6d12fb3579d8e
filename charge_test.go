package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// login answers 204 to the password "right", 401 to any other.
var login = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("password") != "right" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
})

func loginRequest(account, password string) *http.Request {
	form := url.Values{"account": {account}, "password": {password}}
	r := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

func newLogin(t *testing.T, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	account := func(r *http.Request) (string, error) { return "acct:" + r.FormValue("account"), nil }
	l, err := ratelimit.New(store, ratelimit.PerHour(5), append([]ratelimit.Option{ratelimit.WithName("login"),
		ratelimit.WithKeyFunc(account), ratelimit.WithCountIf(ratelimit.CountStatus(401, 403))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCountOnlyFailedLogins(t *testing.T) {
	l := newLogin(t)
	h := l.Handler(login)
	code := func(account, password string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, loginRequest(account, password))
		return w.Code
	}
	for range 20 { // right passwords never count
		if c := code("ann", "right"); c != 204 {
			t.Fatalf("right password: %d", c)
		}
	}
	for i := range 5 {
		if c := code("bob", "wrong"); c != 401 {
			t.Fatalf("wrong password %d: %d, want 401", i+1, c)
		}
	}
	if c := code("bob", "right"); c != 429 {
		t.Fatalf("after 5 failures, the right password: %d, want 429", c)
	}
	if c := code("ann", "right"); c != 204 {
		t.Fatalf("another account: %d", c)
	}
	if err := l.Reset(context.Background(), "acct:bob"); err != nil {
		t.Fatal(err)
	}
	if c := code("bob", "right"); c != 204 {
		t.Fatalf("after Reset: %d, want 204", c)
	}
}

// TestCountSurvivesDisconnect: a client that hangs up once its response is
// written still pays for it.
func TestCountSurvivesDisconnect(t *testing.T) {
	l := newLogin(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		cancel() // the client goes away
	}))
	h.ServeHTTP(httptest.NewRecorder(), loginRequest("eve", "x").WithContext(ctx))
	if res, _ := l.AllowN(context.Background(), "acct:eve", 0); res.Remaining != 4 {
		t.Fatalf("Remaining %d, want 4: the failure was counted", res.Remaining)
	}
}

// TestCountWithBlock: the denial after the fifth failure blocks the
// account for the block's duration.
func TestCountWithBlock(t *testing.T) {
	l := newLogin(t, ratelimit.WithBlock(15*time.Minute))
	h := l.Handler(login)
	for range 5 {
		h.ServeHTTP(httptest.NewRecorder(), loginRequest("bob", "wrong"))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, loginRequest("bob", "right"))
	if w.Code != 429 || w.Header().Get("Retry-After") != "900" {
		t.Fatalf("code %d, Retry-After %q; want 429 and 900", w.Code, w.Header().Get("Retry-After"))
	}
}

func TestCountStatus(t *testing.T) {
	f := ratelimit.CountStatus(401, 403)
	for status, want := range map[int]bool{401: true, 403: true, 200: false, 404: false} {
		if f(status) != want {
			t.Fatalf("CountStatus(401, 403)(%d) = %v", status, !want)
		}
	}
	if _, err := ratelimit.New(memory.New(), ratelimit.PerSecond(1), ratelimit.WithCountIf(nil)); err == nil {
		t.Fatal("WithCountIf(nil) accepted")
	}
}

// TestChargeLeavesBoundedDebt: a charge past the budget leaves the
// bucket below empty, which the key's next requests wait out; a charge
// takes at most one capacity, and the bucket goes at most one capacity
// below empty.
func TestChargeLeavesBoundedDebt(t *testing.T) {
	for _, remote := range []bool{false, true} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		l := clocked(t, clock, remote, ratelimit.PerMinute(10))
		ctx := context.Background()
		allowed(t, l, "llm", true) // 9 left
		if err := l.Charge(ctx, "llm", 500); err != nil {
			t.Fatal(err)
		}
		// 500 is 10 at most: the bucket holds −1, and a request needs 2 more tokens.
		if res := allowed(t, l, "llm", false); res.RetryAfter != 12*time.Second {
			t.Fatalf("RetryAfter %v, want 12s", res.RetryAfter)
		}
		clock.Add(12 * time.Second)
		allowed(t, l, "llm", true) // 0 left
		for range 2 {              // the second finds the bucket at the bound
			if err := l.Charge(ctx, "llm", 10); err != nil {
				t.Fatal(err)
			}
		}
		if res := allowed(t, l, "llm", false); res.RetryAfter != 66*time.Second {
			t.Fatalf("RetryAfter %v, want 66s: one capacity below empty, and one token", res.RetryAfter)
		}
		clock.Add(66 * time.Second)
		allowed(t, l, "llm", true)
		if other := allowed(t, l, "other", true); other.Remaining != 9 {
			t.Fatalf("another key: Remaining %d", other.Remaining)
		}
		if err := l.Charge(ctx, "llm", -1); !errors.Is(err, ratelimit.ErrInvalidCost) {
			t.Fatalf("Charge(-1) = %v", err)
		}
	}
}

// TestChargeIsFleetWide: a charge on one app server is in the store, so
// that another, which never saw it, denies the key in one store call.
func TestChargeIsFleetWide(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ls, store := fleet(t, clock, 2, ratelimit.PerMinute(10))
	if err := ls[0].Charge(context.Background(), "llm", 10); err != nil {
		t.Fatal(err)
	}
	if n, m := store.allowN.Load()+store.allowAll.Load(), store.reserveN.Load(); n != 0 || m != 1 {
		t.Fatalf("%d AllowN/AllowAll and %d ReserveN calls for a charge, want one booking", n, m)
	}
	if res := allowed(t, ls[1], "llm", false); res.RetryAfter != 6*time.Second {
		t.Fatalf("the other server: RetryAfter %v, want 6s", res.RetryAfter)
	}
}

// TestChargeWindow: a window is charged what it holds, so that its key
// waits for the window's end.
func TestChargeWindow(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_020, 0)} // 40 s into a minute
	l := clocked(t, clock, true, ratelimit.PerMinute(10).WithAlgorithm(ratelimit.FixedWindow))
	ctx := context.Background()
	allowed(t, l, "rows", true)
	if err := l.Charge(ctx, "rows", 100); err != nil {
		t.Fatal(err)
	}
	res := allowed(t, l, "rows", false)
	if res.Remaining != 0 || res.RetryAfter != 20*time.Second {
		t.Fatalf("after the charge: %+v, want none left until the window's end in 20s", res)
	}
	clock.Add(20 * time.Second)
	if res := allowed(t, l, "rows", true); res.Remaining != 9 {
		t.Fatalf("the next window: Remaining %d, want 9", res.Remaining)
	}
}

// TestChargeWhileStoreFails: a charge while the breaker is open makes no
// store call; the key owes it, and pays it once the store answers.
func TestChargeWhileStoreFails(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	mem := memory.New(memory.WithClock(clock.Now))
	defer mem.Close()
	flaky := &switchStore{Store: mem}
	b := ratelimit.NewBreaker(1, time.Minute)
	l, err := ratelimit.New(flaky, ratelimit.PerMinute(10), ratelimit.WithBreaker(b), ratelimit.WithFailOpen(),
		ratelimit.WithPlainKeys(), ratelimit.WithName("llm"), ratelimit.WithDenyCache(0), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	ratelimit.SetClock(l, clock.Now)
	ctx := context.Background()
	flaky.down.Store(true)
	l.Allow(ctx, "k") // opens the breaker
	calls := flaky.calls.Load()
	if err := l.Charge(ctx, "k", 8); err != nil {
		t.Fatal(err)
	}
	if flaky.calls.Load() != calls {
		t.Fatal("Charge called the store behind an open breaker")
	}
	flaky.down.Store(false)
	clock.Add(time.Minute) // the breaker lets a probe through
	if res := allowed(t, l, "k", true); res.Remaining != 1 {
		t.Fatalf("Remaining %d, want 1: the request paid the 8 owed", res.Remaining)
	}
}

// switchStore is a shared store that fails while down, and counts its
// calls.
type switchStore struct {
	*memory.Store
	down  atomic.Bool
	calls atomic.Int64
}

func (*switchStore) Local() bool { return false }

func (s *switchStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

func (s *switchStore) ReserveN(ctx context.Context, key string, l ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return ratelimit.Reservation{}, errDown
	}
	return s.Store.ReserveN(ctx, key, l, n, maxWait)
}

// TestChargeAllocatesNothing: on the memory store, a charge allocates
// nothing.
func TestChargeAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := clocked(t, clock, false, ratelimit.PerSecond(1000))
	ctx := context.Background()
	l.Charge(ctx, "k", 1)
	if a := testing.AllocsPerRun(1000, func() { clock.Add(time.Second); l.Charge(ctx, "k", 10) }); a != 0 {
		t.Fatalf("Charge allocates %v times, want 0", a)
	}
}

// TestCountedStatus: the status counted is the response's, not an
// informational 1xx, and a handler that panics before writing one is a
// 500, not a 200.
func TestCountedStatus(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    int
	}{
		{"a 103 then a 401", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusUnauthorized)
		}, http.StatusUnauthorized},
		{"nothing written", func(http.ResponseWriter, *http.Request) {}, http.StatusOK},
		{"a panic", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, http.StatusInternalServerError},
	} {
		var got int
		store := memory.New()
		defer store.Close()
		l, err := ratelimit.New(store, ratelimit.PerMinute(5), ratelimit.WithCountIf(func(status int) bool { got = status; return false }))
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() { recover() }()
			l.Handler(tt.handler).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		}()
		if got != tt.want {
			t.Errorf("%s: counted %d, want %d", tt.name, got, tt.want)
		}
	}
}

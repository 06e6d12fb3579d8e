package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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
	if res, _ := l.Report(context.Background(), "acct:eve"); res.Remaining != 4 {
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

// TestChargeLeavesBoundedDebt: a charge past the budget is paid by the
// key's next requests, which wait it out; it is bounded by the capacity.
func TestChargeLeavesBoundedDebt(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := clocked(t, clock, false, ratelimit.PerMinute(10), ratelimit.WithCharges())
	ctx := context.Background()
	allowed(t, l, "llm", true) // 9 left
	if err := l.Charge(ctx, "llm", 500); err != nil {
		t.Fatal(err)
	}
	// The debt is 10 (the capacity): the next request needs 1 + 9 tokens.
	allowed(t, l, "llm", false)
	clock.Add(6 * time.Second) // one token: 10 in the bucket
	if res := allowed(t, l, "llm", true); res.Remaining != 0 {
		t.Fatalf("Remaining %d, want 0: the request paid 9 of the debt", res.Remaining)
	}
	clock.Add(6 * time.Second) // one token, owed
	allowed(t, l, "llm", false)
	clock.Add(6 * time.Second)
	allowed(t, l, "llm", true) // the debt is paid
	other := allowed(t, l, "other", true)
	if other.Remaining != 9 {
		t.Fatalf("another key: Remaining %d", other.Remaining)
	}
	noCharges := clocked(t, clock, false, ratelimit.PerMinute(10))
	if err := noCharges.Charge(ctx, "llm", 1); !errors.Is(err, ratelimit.ErrNoCharges) {
		t.Fatalf("Charge without WithCharges = %v", err)
	}
	if err := l.Charge(ctx, "llm", -1); !errors.Is(err, ratelimit.ErrInvalidCost) {
		t.Fatalf("Charge(-1) = %v", err)
	}
}

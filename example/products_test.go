package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/store/memory"
)

func productRoutes(t *testing.T) (http.Handler, *time.Location) {
	t.Helper()
	zone, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	mux, _, err := routes(store, zone)
	if err != nil {
		t.Fatal(err)
	}
	return mux, zone
}

func get(h http.Handler, path, apiKey string, remote ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if len(remote) > 0 {
		r.RemoteAddr = remote[0]
	}
	if apiKey != "" {
		r.Header.Set("X-API-Key", apiKey)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func post(h http.Handler, path string, form url.Values, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if remote != "" {
		r.RemoteAddr = remote
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestPlansInHeaders: a pro key and a free key see their own limits and
// plan names.
func TestPlansInHeaders(t *testing.T) {
	mux, _ := productRoutes(t)
	for _, c := range []struct{ key, remote, limit, plan string }{
		{"k1", "198.51.100.1:1", "60", `"plan.free";q=60;w=60`},
		{"pro-acme", "198.51.100.2:1", "600", `"plan.pro";q=600;w=60`},
	} {
		w := get(mux, "/api/items", c.key, c.remote)
		if w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != c.limit || !strings.Contains(w.Header().Get("RateLimit-Policy"), c.plan) {
			t.Fatalf("%s: %d, limit %q, policy %q; want %s and %s", c.key, w.Code, w.Header().Get("X-RateLimit-Limit"), w.Header().Get("RateLimit-Policy"), c.limit, c.plan)
		}
	}
}

// TestDailyQuotaPointsAtMidnight: a free key that spent its 1,000 of the
// day (60 a minute) is told to come back at the next midnight in Berlin.
func TestDailyQuotaPointsAtMidnight(t *testing.T) {
	zone, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// The store's sweeper reads the clock on a goroutine of its own: the
	// test moves it through an atomic, never a variable both touch.
	var clock atomic.Pointer[time.Time]
	setNow := func(t time.Time) { clock.Store(&t) }
	setNow(time.Date(2026, time.December, 3, 23, 0, 0, 0, zone))
	store := memory.New(memory.WithClock(func() time.Time { return *clock.Load() }))
	defer store.Close()
	api, err := newAPI(store, zone)
	if err != nil {
		t.Fatal(err)
	}
	h := withPlan(api.Handler(text("ok")))
	for i := range 1000 {
		if i%60 == 0 {
			setNow(clock.Load().Add(time.Minute))
		}
		if w := get(h, "/api/items", "k-daily"); w.Code != 200 {
			t.Fatalf("request %d: %d", i+1, w.Code)
		}
	}
	now := clock.Load().Add(time.Minute) // the minute's budget is back, the day's is not
	setNow(now)
	w := get(h, "/api/items", "k-daily")
	midnight := time.Date(2026, time.December, 4, 0, 0, 0, 0, zone)
	want := strconv.Itoa(int(midnight.Sub(now) / time.Second))
	if w.Code != 429 || w.Header().Get("Retry-After") != want || w.Header().Get("X-RateLimit-Reset") != want {
		t.Fatalf("%d, Retry-After %q, Reset %q; want 429 and %s s until midnight in Berlin", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"), want)
	}
	if !strings.Contains(w.Header().Get("RateLimit"), `"daily.free";r=0;t=`+want) {
		t.Fatalf("RateLimit %q", w.Header().Get("RateLimit"))
	}
}

// TestLoginCountsFailuresOnly: right passwords never count; 5 wrong ones
// lock the account (blocked 15 minutes), other accounts go on, and a reset
// unblocks it at once.
func TestLoginCountsFailuresOnly(t *testing.T) {
	mux, _ := productRoutes(t)
	login := func(account, password string) int {
		return post(mux, "/login", url.Values{"account": {account}, "password": {password}}, "").Code
	}
	for range 10 {
		if c := login("ann", "correct-horse"); c != 200 {
			t.Fatalf("right password: %d", c)
		}
	}
	for i := range 5 {
		if c := login("bob", "guess"); c != 401 {
			t.Fatalf("wrong password %d: %d", i+1, c)
		}
	}
	w := post(mux, "/login", url.Values{"account": {"bob"}, "password": {"correct-horse"}}, "")
	if w.Code != 429 || w.Header().Get("Retry-After") != strconv.Itoa(15*60) {
		t.Fatalf("locked account: %d, Retry-After %q; want 429 and 900", w.Code, w.Header().Get("Retry-After"))
	}
	if c := login("ann", "correct-horse"); c != 200 {
		t.Fatalf("another account: %d", c)
	}
	if c := post(mux, "/admin/reset?account=bob", nil, "203.0.113.9:1234").Code; c != 403 {
		t.Fatalf("reset from afar: %d, want 403", c)
	}
	if c := post(mux, "/admin/reset?account=bob", nil, "127.0.0.1:1234").Code; c != 200 {
		t.Fatalf("reset: %d", c)
	}
	if c := login("bob", "correct-horse"); c != 200 {
		t.Fatalf("after reset: %d, want 200", c)
	}
	if c := post(mux, "/login", url.Values{"password": {"x"}}, "").Code; c != 400 {
		t.Fatalf("no account: %d, want 400", c)
	}
	big := url.Values{"account": {strings.Repeat("a", 10_000)}, "password": {"x"}}
	if c := post(mux, "/login", big, "").Code; c != 400 {
		t.Fatalf("a 10 kB form: %d, want 400", c)
	}
}

// TestResetUnblocksAPIKey: a free key out of its minute is served again at
// once after a reset.
func TestResetUnblocksAPIKey(t *testing.T) {
	mux, _ := productRoutes(t)
	for range 60 {
		get(mux, "/api/items", "k9")
	}
	if c := get(mux, "/api/items", "k9").Code; c != 429 {
		t.Fatalf("61st: %d, want 429", c)
	}
	if c := post(mux, "/admin/reset?api_key=k9", nil, "127.0.0.1:1").Code; c != 200 {
		t.Fatalf("reset: %d", c)
	}
	if c := get(mux, "/api/items", "k9").Code; c != 200 {
		t.Fatalf("after reset: %d, want 200", c)
	}
}

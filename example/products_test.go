package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
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
	s, err := app(config{store: store, zone: zone, adminToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	return s.handler, zone
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

func post(h http.Handler, path string, form url.Values, remote string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
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
	var clock atomic.Pointer[time.Time] // the store's sweeper reads it too
	now := time.Date(2026, time.December, 3, 23, 0, 0, 0, zone)
	clock.Store(&now)
	store := memory.New(memory.WithClock(func() time.Time { return *clock.Load() }))
	defer store.Close()
	advance := func(d time.Duration) {
		now = now.Add(d)
		next := now
		clock.Store(&next)
	}
	api, err := newAPI(store, zone, ratelimit.KeyByIP())
	if err != nil {
		t.Fatal(err)
	}
	h := withPlan(api.Handler(text("ok")))
	for i := range 1000 {
		if i%60 == 0 {
			advance(time.Minute)
		}
		if w := get(h, "/api/items", "k-daily"); w.Code != 200 {
			t.Fatalf("request %d: %d", i+1, w.Code)
		}
	}
	advance(time.Minute) // the minute's budget is back, the day's is not
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

// testToken is the admin token of the tests.
const testToken = "a test token, not a secret"

// admin is the header that /admin/reset wants.
var admin = []string{"Authorization", "Bearer " + testToken}

// TestLoginCountsFailuresOnly: right passwords never count; 5 wrong ones
// from an address block the account there (15 minutes), other accounts go
// on, and a reset unblocks it at once.
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
	if w.Code != 429 || w.Header().Get("Retry-After") != "900" || w.Header().Get("X-RateLimit-Reset") != "900" {
		t.Fatalf("locked account: %d, Retry-After %q, Reset %q; want 429, 900 and 900", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"))
	}
	if c := login("ann", "correct-horse"); c != 200 {
		t.Fatalf("another account: %d", c)
	}
	if c := post(mux, "/admin/reset?account=bob&address=192.0.2.1", nil, "", admin...).Code; c != 200 {
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

// TestAttackersCannotLockOutAVictim: guesses from other addresses block
// those addresses, never the victim's; the account alone is limited to 20
// failures an hour from anywhere, without a block: the victim waits for
// the next token (3 minutes), not 15 minutes.
func TestAttackersCannotLockOutAVictim(t *testing.T) {
	mux, _ := productRoutes(t)
	login := func(password, remote string) *httptest.ResponseRecorder {
		return post(mux, "/login", url.Values{"account": {"victim"}, "password": {password}}, remote)
	}
	for i := range 6 { // one attacker: blocked after 5
		want := 401
		if i == 5 {
			want = 429
		}
		if c := login("guess", "203.0.113.1:1").Code; c != want {
			t.Fatalf("attacker's guess %d: %d, want %d", i+1, c, want)
		}
	}
	if c := login("correct-horse", "198.51.100.7:1").Code; c != 200 {
		t.Fatalf("the victim, after one attacker's block: %d, want 200", c)
	}
	for i := range 15 { // 15 more failures from 5 addresses: 20 in all
		if c := login("guess", fmt.Sprintf("203.0.113.%d:1", 2+i/3)).Code; c != 401 {
			t.Fatalf("spread guess %d: %d, want 401", i+1, c)
		}
	}
	w := login("guess", "203.0.113.99:1")
	if w.Code != 429 || w.Header().Get("Retry-After") != "180" {
		t.Fatalf("the 21st failure of the hour: %d, Retry-After %q; want 429 and 180 (the account's next token, no block)", w.Code, w.Header().Get("Retry-After"))
	}
	if c := post(mux, "/admin/reset?account=victim", nil, "", admin...).Code; c != 200 {
		t.Fatalf("reset of the account: %d", c)
	}
	if c := login("correct-horse", "198.51.100.7:1").Code; c != 200 {
		t.Fatalf("the victim after the reset: %d, want 200", c)
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
	if c := post(mux, "/admin/reset?api_key=k9", nil, "", admin...).Code; c != 200 {
		t.Fatalf("reset: %d", c)
	}
	if c := get(mux, "/api/items", "k9").Code; c != 200 {
		t.Fatalf("after reset: %d, want 200", c)
	}
}

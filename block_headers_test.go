package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestBlockedHeadersDescribeTheBlock: a blocked key's X-RateLimit-Reset is
// its Retry-After: the block's end, or the budget's own wait if that is
// longer (never the refill of a budget that the block hides, never before
// Retry-After), on the memory store and on a shared one (whose deny cache
// answers blocked keys).
func TestBlockedHeadersDescribeTheBlock(t *testing.T) {
	type step struct {
		after            time.Duration // since the previous request
		code             int
		retryAfter       string
		reset, remaining string
	}
	for _, tt := range []struct {
		name  string
		limit ratelimit.Limit
		block time.Duration
		steps []step // after the budget's requests, all allowed
	}{
		{"the README's login: 5 an hour, then 15 minutes", ratelimit.PerHour(5), 15 * time.Minute, []step{
			{0, 429, "900", "900", "0"},
			{10 * time.Minute, 429, "300", "300", "0"},
			{5 * time.Minute, 200, "", "3420", "0"}, // the block is over: the budget's own headers (0.25 tokens left)
		}},
		{"a budget that waits longer than the block", ratelimit.PerHour(1), 15 * time.Minute, []step{
			{0, 429, "3600", "3600", "0"},
			{time.Minute, 429, "3540", "3540", "0"}, // blocked, and the budget waits longer
		}},
	} {
		for _, shared := range []bool{false, true} {
			name := tt.name
			if shared {
				name += ", on a shared store"
			}
			t.Run(name, func(t *testing.T) {
				clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
				mem := memory.New(memory.WithClock(clock.Now))
				defer mem.Close()
				var store ratelimit.Store = mem
				if shared {
					store = &callCounter{Store: mem}
				}
				l, err := ratelimit.New(store, tt.limit, ratelimit.WithName("login"), ratelimit.WithBlock(tt.block))
				if err != nil {
					t.Fatal(err)
				}
				ratelimit.SetClock(l, clock.Now)
				h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				send := func() *httptest.ResponseRecorder {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
					return w
				}
				for i := range tt.limit.Capacity() {
					if w := send(); w.Code != 200 {
						t.Fatalf("request %d: %d", i+1, w.Code)
					}
				}
				for i, s := range tt.steps {
					clock.Add(s.after)
					w := send()
					got := step{s.after, w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"), w.Header().Get("X-RateLimit-Remaining")}
					if got != s {
						t.Errorf("step %d: %d, Retry-After %q, Reset %q, Remaining %q; want %d, %q, %q, %q",
							i+1, got.code, got.retryAfter, got.reset, got.remaining, s.code, s.retryAfter, s.reset, s.remaining)
					}
				}
			})
		}
	}
}

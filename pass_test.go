package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestOnePassAllocatesNothing: on the memory store, a request allocates
// nothing, with one policy or several, with every header style.
func TestOnePassAllocatesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"one policy", nil},
		{"two policies", []ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(3600)})}},
		{"three policies, per-ip, IETF headers", []ratelimit.Option{ratelimit.WithHeaders(ratelimit.HeadersBoth),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(3600)}),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "per-ip", Limit: ratelimit.PerHour(3600), Key: func(*http.Request) (string, error) { return "ip:192.0.2.1", nil }})}},
		{"a block", []ratelimit.Option{ratelimit.WithBlock(time.Hour)}},
		{"counting responses", []ratelimit.Option{ratelimit.WithCountIf(ratelimit.CountStatus(401))}},
		{"a LimitFunc policy, IETF headers", []ratelimit.Option{ratelimit.WithHeaders(ratelimit.HeadersIETF),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "contract", LimitFunc: func(context.Context) (ratelimit.Limit, error) { return ratelimit.PerHour(3600), nil }})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A second passes per request: every one is allowed, with
			// realistic header values.
			var now atomic.Int64
			store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
			defer store.Close()
			l, err := ratelimit.New(store, ratelimit.PerMinute(60), append(tt.opts, ratelimit.WithName("api"),
				ratelimit.WithKeyFunc(func(*http.Request) (string, error) { return "k", nil }))...)
			if err != nil {
				t.Fatal(err)
			}
			skipUnderRace(t)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			w := &headerWriter{h: http.Header{}}
			if !l.Admit(w, r) {
				t.Fatal("the first request was denied")
			}
			if a := testing.AllocsPerRun(1000, func() { clear(w.h); l.Admit(w, r) }); a != 0 {
				t.Errorf("Admit allocates %v times per request, want 0", a)
			}
			if strings.Contains(tt.name, "per-ip") {
				return // AllowN refuses a policy keyed by a KeyFunc of its own
			}
			if a := testing.AllocsPerRun(1000, func() { l.Allow(context.Background(), "k") }); a != 0 {
				t.Errorf("Allow allocates %v times per decision, want 0", a)
			}
		})
	}
}

// skipUnderRace skips an exact allocation test under the race detector,
// whose sync.Pool drops items at random; .ci/run runs these tests without
// it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts are exact only without -race (sync.Pool drops items under it); .ci/run runs this test without -race")
	}
}

func TestCost(t *testing.T) {
	cost := ratelimit.WithCost(func(r *http.Request) int {
		if r.URL.Path == "/export" {
			return 3
		}
		return 1
	})
	f := newFixture(t, ratelimit.PerHour(4), cost)
	a := "203.0.113.1:1"
	got := f.codes(req{remote: a, path: "/export"}, req{remote: a, path: "/export"}, req{remote: a}, req{remote: a})
	if want := []int{ok, limited, ok, limited}; !equalInts(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
}

func TestBadCostIsA500(t *testing.T) {
	var logged error
	f := newFixture(t, ratelimit.PerHour(4), ratelimit.WithCost(func(*http.Request) int { return 5 }),
		ratelimit.WithErrorHandler(func(_ *http.Request, err error) { logged = err }))
	if w := f.do(req{}); w.Code != 500 || f.served != 0 || !errors.Is(logged, ratelimit.ErrCostExceedsCapacity) {
		t.Fatalf("got %d, served %d, error %v; want 500, 0, ErrCostExceedsCapacity", w.Code, f.served, logged)
	}
}

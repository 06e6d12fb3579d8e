package ratelimit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestInFlightRefusesOptionsThatDoNotApply: NewInFlight takes its own
// options and names any other in its error, rather than ignoring it; New
// refuses the lease of an in-flight limit.
func TestInFlightRefusesOptionsThatDoNotApply(t *testing.T) {
	fallback := memory.New()
	defer fallback.Close()
	for name, opt := range map[string]ratelimit.Option{
		"WithCost":      ratelimit.WithCost(func(*http.Request) int { return 2 }),
		"WithHeaders":   ratelimit.WithHeaders(ratelimit.HeadersIETF),
		"WithPolicy":    ratelimit.WithPolicy(ratelimit.Policy{Name: "burst", Limit: ratelimit.PerSecond(5)}),
		"WithDenyCache": ratelimit.WithDenyCache(100),
		"WithFallback":  ratelimit.WithFallback(fallback, 2),
		"WithBlock":     ratelimit.WithBlock(time.Minute),
		"WithCountIf":   ratelimit.WithCountIf(func(int) bool { return true }),
		"WithMaxDelay":  ratelimit.WithMaxDelay(time.Second),
	} {
		_, err := ratelimit.NewInFlight(memory.NewSlots(), 2, opt)
		if !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), "NewInFlight: "+name+" does not apply") {
			t.Errorf("NewInFlight with %s: %v; want ErrBadConfig naming it", name, err)
		}
	}
	if _, err := ratelimit.NewInFlight(newFrozenSlots(), 2, ratelimit.WithName("report"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), ratelimit.WithKeySecret([]byte("sixteen byte secret!")),
		ratelimit.WithPlainKeys(), ratelimit.WithDenyHandler(http.NotFoundHandler()),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}), ratelimit.WithFailClosed(),
		ratelimit.WithLease(time.Second), ratelimit.WithObserver(ratelimit.Observer{Decision: func(ratelimit.Decision) {}}),
		ratelimit.WithTimeout(time.Second), ratelimit.WithBreaker(nil),
		ratelimit.WithSkip(func(*http.Request) bool { return false }), ratelimit.WithDryRun()); err != nil {
		t.Errorf("NewInFlight with every option of its own: %v", err)
	}
	store := memory.New()
	defer store.Close()
	if _, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithLease(time.Second)); !errors.Is(err, ratelimit.ErrBadConfig) ||
		!strings.Contains(err.Error(), "New: WithLease does not apply") {
		t.Errorf("New with WithLease: %v; want ErrBadConfig naming it", err)
	}
}

// TestInFlightDryRunAndSkip: in dry run, a third concurrent request runs
// without a slot, told to the observer as would-deny and without
// Retry-After; a skipped request runs without a slot or headers.
func TestInFlightDryRunAndSkip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opt     ratelimit.Option
		header  string // X-Ratelimit-Remaining of the third request
		outcome []ratelimit.Outcome
	}{
		{"dry run", ratelimit.WithDryRun(), "0",
			[]ratelimit.Outcome{ratelimit.OutcomeAllowed, ratelimit.OutcomeAllowed, ratelimit.OutcomeDryRunDenied}},
		{"skip", ratelimit.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Health") != "" }), "",
			[]ratelimit.Outcome{ratelimit.OutcomeAllowed, ratelimit.OutcomeAllowed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var outcomes []ratelimit.Outcome
				slots := memory.NewSlots()
				f := newReportLimit(t, slots, tt.opt, ratelimit.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
					mu.Lock()
					outcomes = append(outcomes, d.Outcome)
					mu.Unlock()
				}}))
				release := make(chan struct{})
				h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Third") == "" {
						<-release
					}
					w.WriteHeader(http.StatusAccepted)
				}))
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), keyed("a")) })
				}
				synctest.Wait() // both hold a slot
				third := keyed("a")
				third.Header.Set("X-Third", "1")
				third.Header.Set("X-Health", "1")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, third)
				close(release)
				wg.Wait()
				if rec.Code != http.StatusAccepted || rec.Header().Get("Retry-After") != "" ||
					rec.Header().Get("X-Ratelimit-Remaining") != tt.header {
					t.Fatalf("the third request: %d %v; want it run, remaining %q, no Retry-After", rec.Code, rec.Header(), tt.header)
				}
				mu.Lock()
				defer mu.Unlock()
				slices.Sort(outcomes)
				if !slices.Equal(outcomes, tt.outcome) {
					t.Fatalf("observed %v, want %v", outcomes, tt.outcome)
				}
			})
		})
	}
}

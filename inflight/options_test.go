package inflight_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestNewTakesEveryOptionAndRefusesBadValues: New takes each of its
// options, and refuses a bad value of one, or a bad store or max, with
// ErrBadConfig and what was wrong.
func TestNewTakesEveryOptionAndRefusesBadValues(t *testing.T) {
	if _, err := inflight.New(newFrozenSlots(), 2, inflight.WithName("report"),
		inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), inflight.WithKeySecret([]byte("sixteen byte secret!")),
		inflight.WithPlainKeys(), inflight.WithDenyHandler(http.NotFoundHandler()),
		inflight.WithErrorHandler(func(*http.Request, error) {}), inflight.WithFailClosed(),
		inflight.WithLease(time.Second), inflight.WithObserver(ratelimit.Observer{Decision: func(ratelimit.Decision) {}}),
		inflight.WithTimeout(time.Second), inflight.WithBreaker(nil), inflight.WithLogger(slog.Default()),
		inflight.WithSkip(func(*http.Request) bool { return false }), inflight.WithDryRun()); err != nil {
		t.Errorf("New with every option: %v", err)
	}
	if _, err := inflight.New(memory.NewSlots(), 2, inflight.WithFailOpen()); err != nil {
		t.Errorf("New with WithFailOpen: %v", err)
	}
	for _, tt := range []struct {
		name  string
		store inflight.Store
		max   int
		opt   inflight.Option
		want  string
	}{
		{"nil store", nil, 2, inflight.WithName("a"), "nil store"},
		{"max 0", memory.NewSlots(), 0, inflight.WithName("a"), "max 0"},
		{"max above MaxRate", memory.NewSlots(), ratelimit.MaxRate + 1, inflight.WithName("a"), "max"},
		{"lease too short", memory.NewSlots(), 2, inflight.WithLease(time.Millisecond), "WithLease(1ms)"},
		{"lease too long", memory.NewSlots(), 2, inflight.WithLease(ratelimit.MaxPeriod + 1), "WithLease"},
		{"bad name", memory.NewSlots(), 2, inflight.WithName("a b"), "WithName"},
		{"negative timeout", memory.NewSlots(), 2, inflight.WithTimeout(-time.Second), "WithTimeout"},
	} {
		_, err := inflight.New(tt.store, tt.max, tt.opt)
		if !errors.Is(err, ratelimit.ErrBadConfig) ||
			!strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New: %v; want an error naming %q", tt.name, err, tt.want)
		}
	}
}

// TestInFlightDryRunAndSkip: in dry run, a third concurrent request runs
// without a slot, told to the observer as would-deny and without
// Retry-After; a skipped request runs without a slot or headers.
func TestInFlightDryRunAndSkip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opt     inflight.Option
		header  string // X-Ratelimit-Remaining of the third request
		outcome []ratelimit.Outcome
	}{
		{"dry run", inflight.WithDryRun(), "0",
			[]ratelimit.Outcome{ratelimit.OutcomeAllowed, ratelimit.OutcomeAllowed, ratelimit.OutcomeDryRunDenied}},
		{"skip", inflight.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Health") != "" }), "",
			[]ratelimit.Outcome{ratelimit.OutcomeAllowed, ratelimit.OutcomeAllowed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var outcomes []ratelimit.Outcome
				slots := memory.NewSlots()
				f := newReportLimit(t, slots, tt.opt, inflight.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
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

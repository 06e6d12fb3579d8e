package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

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

func TestDryRunServesEverythingAndReportsWouldDeny(t *testing.T) {
	tl := newTally()
	f := newFixture(t, ratelimit.PerMinute(10), ratelimit.WithName("home"),
		ratelimit.WithDryRun(), ratelimit.WithObserver(tl.observer(false)))
	for i := range 15 {
		w := f.do(req{remote: "192.0.2.1:1"})
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200 in dry run", i+1, w.Code)
		}
		if w.Header().Get("Retry-After") != "" {
			t.Fatalf("request %d: a served request carries Retry-After", i+1)
		}
		if i >= 10 && w.Header().Get(ratelimit.HeaderRemaining) != "0" {
			t.Fatalf("request %d: X-RateLimit-Remaining %q, want 0 (headers tell the truth)", i+1, w.Header().Get(ratelimit.HeaderRemaining))
		}
	}
	if f.served != 15 || tl.outcomes[ratelimit.Allowed] != 10 || tl.outcomes[ratelimit.DryRunDenied] != 5 {
		t.Errorf("served %d, observed %v; want 15 served, 10 allowed and 5 dry_run_denied", f.served, tl.outcomes)
	}
	if len(tl.keys) != 0 {
		t.Errorf("the observer got keys without asking: %q", tl.keys)
	}
}

func TestObserverSeesEveryDecisionAndKeysOnlyWhenAsked(t *testing.T) {
	tl := newTally()
	f := newFixture(t, ratelimit.PerMinute(2), ratelimit.WithObserver(tl.observer(true)))
	for range 3 {
		f.do(req{remote: "192.0.2.1:1"})
	}
	if tl.outcomes[ratelimit.Allowed] != 2 || tl.outcomes[ratelimit.Denied] != 1 || tl.sources[ratelimit.FromStore] != 3 {
		t.Errorf("observed %v from %v, want 2 allowed and 1 denied, all from the store", tl.outcomes, tl.sources)
	}
	if len(tl.keys) != 3 || len(f.store.keys) == 0 || tl.keys[0] != f.store.keys[0] || !strings.HasSuffix(tl.keys[0], "/ip:192.0.2.1") {
		t.Errorf("keys %q, want the store key of each decision", tl.keys)
	}
}

func TestObserverCostsNoAllocationWhenUnset(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerSecond(1_000_000_000), ratelimit.WithHeaders(ratelimit.HeadersNone),
		ratelimit.WithKeyFunc(func(*http.Request) (string, error) { return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	// The key is namespaced, one string; nothing else.
	if a := testing.AllocsPerRun(1000, func() { l.Admit(w, r) }); a > 1 {
		t.Errorf("Admit allocates %v times per request, want at most 1 (the namespaced key)", a)
	}
}

func TestFallbackDecidesWithAShareOfTheLimit(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	local := memory.New(memory.WithClock(clock.Now))
	defer local.Close()
	tl := newTally()
	var told int
	l, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(20),
		ratelimit.WithFallback(local, 4), ratelimit.WithClock(clock.Now),
		ratelimit.WithObserver(tl.observer(false)),
		ratelimit.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) { told++ }))
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for range 7 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		w := httptest.NewRecorder()
		l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
		codes = append(codes, w.Code)
	}
	want := []int{200, 200, 200, 200, 200, 429, 429} // 20 per minute shared by 4: 5 each
	if !equalInts(codes, want) {
		t.Errorf("status codes %v, want %v", codes, want)
	}
	if tl.sources[ratelimit.FromFallback] != 7 {
		t.Errorf("sources %v, want 7 from the fallback", tl.sources)
	}
	if told != 7 {
		t.Errorf("the error handler was told %d times, want 7: the fallback decided, the store still failed", told)
	}
}

func TestFallbackRefusesBadArguments(t *testing.T) {
	for _, opt := range []ratelimit.Option{ratelimit.WithFallback(nil, 1), ratelimit.WithFallback(memory.New(), 0)} {
		if _, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), opt); err == nil {
			t.Error("New accepted a bad fallback")
		}
	}
}

func TestBreakerOpenErrorReachesTheErrorHandler(t *testing.T) {
	var errs []error
	l, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Hour)),
		ratelimit.WithErrorHandler(func(_ http.ResponseWriter, _ *http.Request, err error) { errs = append(errs, err) }))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l.Check(httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		l.Admit(httptest.NewRecorder(), r)
	}
	if len(errs) != 2 || !errors.Is(errs[0], ratelimit.ErrBreakerOpen) {
		t.Errorf("errors %v, want ErrBreakerOpen once the breaker is open", errs)
	}
}

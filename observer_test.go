package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

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
		if i >= 10 && w.Header().Get("X-RateLimit-Remaining") != "0" {
			t.Fatalf("request %d: X-RateLimit-Remaining %q, want 0 (headers tell the truth)", i+1, w.Header().Get("X-RateLimit-Remaining"))
		}
	}
	if f.served != 15 || tl.outcomes[ratelimit.OutcomeAllowed] != 10 || tl.outcomes[ratelimit.OutcomeDryRunDenied] != 5 {
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
	if tl.outcomes[ratelimit.OutcomeAllowed] != 2 || tl.outcomes[ratelimit.OutcomeDenied] != 1 || tl.sources[ratelimit.FromStore] != 3 {
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
	skipUnderRace(t)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	// The namespaced key comes from the key cache: nothing is allocated.
	if a := testing.AllocsPerRun(1000, func() { l.Admit(w, r) }); a != 0 {
		t.Errorf("Admit allocates %v times per request, want 0", a)
	}
}

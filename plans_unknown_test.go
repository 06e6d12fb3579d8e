package ratelimit_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestPlansUnknownIsObservedAndLoggedAsRefused: a request whose plan the
// policies lack is answered 500; the observer is told of it as an error
// of the failure policy, with no key (not the key of the request the
// pooled pass decided before it), and the log says it was refused, not
// that the store failed and the request was let through.
func TestPlansUnknownIsObservedAndLoggedAsRefused(t *testing.T) {
	var logs bytes.Buffer
	var seen []ratelimit.Decision
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := newPlanned(t, clock,
		ratelimit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		ratelimit.WithPlainKeys(),
		ratelimit.WithObserver(ratelimit.Observer{Keys: true, Decision: func(d ratelimit.Decision) { seen = append(seen, d) }}))
	h := l.Handler(hello)
	h.ServeHTTP(httptest.NewRecorder(), planned("someone-else", "pro")) // leaves its key in the pooled pass
	seen = nil
	w := httptest.NewRecorder()
	h.ServeHTTP(w, planned("k", "enterprise"))
	if w.Code != 500 {
		t.Fatalf("code %d, want 500", w.Code)
	}
	if len(seen) != 1 {
		t.Fatalf("%d decisions observed, want 1: %+v", len(seen), seen)
	}
	if d := seen[0]; d.Outcome != ratelimit.OutcomeErrored || d.Source != ratelimit.FromFailurePolicy ||
		!errors.Is(d.Err, ratelimit.ErrBadConfig) || d.Key != "" {
		t.Errorf("observed %+v; want an error of the failure policy wrapping ErrBadConfig, with no key", d)
	}
	if log := logs.String(); !strings.Contains(log, `policy="refused (500)"`) || strings.Contains(log, "fail open") {
		t.Errorf("logged %q; want the request refused (500), not failed open", log)
	}
}

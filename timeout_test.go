package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

func TestTimeoutBoundsAHangingStore(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
		want int
	}{
		{"fail open serves the request", nil, http.StatusOK},
		{"fail closed answers 503", []ratelimit.Option{ratelimit.WithFailClosed()}, http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := &blockingStore{release: make(chan struct{})}
			defer close(store.release)
			var told []error
			l, err := ratelimit.New(store, ratelimit.PerMinute(10), append(tt.opts, ratelimit.WithTimeout(10*time.Millisecond),
				ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))...)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code := serveStatus(l, context.Background())
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("a hanging store held the request %v, want about the 10ms budget", took)
			}
			if code != tt.want {
				t.Errorf("status %d, want %d", code, tt.want)
			}
			if len(told) != 1 || !errors.Is(told[0], ratelimit.ErrTimeout) || !errors.Is(told[0], context.DeadlineExceeded) {
				t.Errorf("error handler told %v, want one ErrTimeout that is a DeadlineExceeded", told)
			}
		})
	}
}

func TestGoneClientIsNotServedNorReportedNorCountedByTheBreaker(t *testing.T) {
	// The client goes away while the store is called (the store cancels
	// it as the call starts): under a budget of a minute, nothing else can
	// end the call first.
	ctx, cancel := context.WithCancel(context.Background())
	store := &blockingStore{release: make(chan struct{}), onCall: cancel}
	defer close(store.release)
	var told int
	b := ratelimit.NewBreaker(1, time.Minute)
	l, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithBreaker(b), ratelimit.WithTimeout(time.Minute),
		ratelimit.WithErrorHandler(func(*http.Request, error) { told++ }))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if l.Admit(httptest.NewRecorder(), r) {
		t.Error("a request whose client went away was admitted")
	}
	if told != 0 || b.State() != ratelimit.BreakerClosed {
		t.Errorf("error handler told %d times, breaker %v; want 0 and closed", told, b.State())
	}
}

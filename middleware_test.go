package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

func TestSkip(t *testing.T) {
	f := newFixture(t, ratelimit.PerHour(1), ratelimit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" }))
	for range 5 {
		if w := f.do(req{path: "/healthz"}); w.Code != ok || w.Header().Get("X-RateLimit-Limit") != "" {
			t.Fatalf("health check: %d with headers %v", w.Code, w.Header())
		}
	}
	if got := f.codes(req{}, req{}); !equalInts(got, []int{ok, limited}) {
		t.Fatalf("codes %v after health checks, want [200 429]", got)
	}
}

func TestStoreErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     []ratelimit.Option
		wantCode int
	}{
		{"fail open by default", nil, ok},
		{"fail closed", []ratelimit.Option{ratelimit.WithFailClosed()}, http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged error
			opts := append(tt.opts, ratelimit.WithErrorHandler(func(_ *http.Request, err error) { logged = err }))
			l, err := ratelimit.New(failingStore{}, ratelimit.PerHour(1), opts...)
			if err != nil {
				t.Fatal(err)
			}
			served := false
			h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code != tt.wantCode || served != (tt.wantCode == ok) || !errors.Is(logged, errDown) {
				t.Fatalf("got %d, served %v, error %v", w.Code, served, logged)
			}
			if strings.Contains(w.Body.String(), errDown.Error()) {
				t.Fatal("the store's error leaked into the response")
			}
		})
	}
}

func TestGoneClientIsNeitherServedNorReported(t *testing.T) {
	reported := false
	f := newFixture(t, ratelimit.PerHour(5), ratelimit.WithErrorHandler(func(*http.Request, error) { reported = true }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
	f.handler.ServeHTTP(httptest.NewRecorder(), r)
	if f.served != 0 || reported {
		t.Fatalf("a request whose client left: served %d times, reported %v; want neither", f.served, reported)
	}
}

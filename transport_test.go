package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// stubAPI is a third party's API as a RoundTripper: it records when each
// request came, and answers status (with retryAfter, if set).
type stubAPI struct {
	times      []time.Duration
	start      time.Time
	status     atomic.Int32
	retryAfter string
}

func (s *stubAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	s.times = append(s.times, time.Since(s.start))
	h := http.Header{}
	if s.retryAfter != "" {
		h.Set("Retry-After", s.retryAfter)
	}
	code := int(s.status.Load())
	if code == 0 {
		code = http.StatusOK
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

func newTransport(t *testing.T, limit ratelimit.Limit) (*ratelimit.Transport, *stubAPI, func()) {
	store := memory.New()
	l, err := ratelimit.New(store, limit, ratelimit.WithName("partner"))
	if err != nil {
		t.Fatal(err)
	}
	api := &stubAPI{start: time.Now()}
	return &ratelimit.Transport{Limiter: l, Base: api}, api, func() { store.Close() }
}

func send(t *testing.T, c *http.Client, ctx context.Context) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.example.com/v1/things", nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func TestTransportKeepsToTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, api, done := newTransport(t, ratelimit.PerSecond(10).WithBurst(2))
		defer done()
		c := &http.Client{Transport: tr}
		for range 5 {
			if _, err := send(t, c, context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		want := []time.Duration{0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
		if len(api.times) != len(want) {
			t.Fatalf("sent %d requests, want %d", len(api.times), len(want))
		}
		for i := range want {
			if api.times[i] != want[i] {
				t.Fatalf("request %d sent at %v, want %v (all: %v)", i, api.times[i], want[i], api.times)
			}
		}
	})
}

func TestTransportCancelledWhileWaitingSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, api, done := newTransport(t, ratelimit.PerMinute(1))
		defer done()
		c := &http.Client{Transport: tr}
		send(t, c, context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := send(t, c, ctx); err == nil {
			t.Fatal("a request whose deadline comes before its token was sent")
		}
		if len(api.times) != 1 {
			t.Fatalf("%d requests reached the API, want 1", len(api.times))
		}
	})
}

func TestTransport429RetryAfterPausesTheBudget(t *testing.T) {
	for _, c := range []struct {
		name, retryAfter string
		burst            int
		next             time.Duration // when the next request goes
	}{
		{"seconds", "3", 10, 3 * time.Second},
		{"an HTTP date", "", 10, 5 * time.Second}, // set below from the bubble's clock
		{"garbage is ignored", "soon", 10, 0},
		{"a negative value is ignored", "-5", 10, 0},
		{"a huge value is capped at MaxPause", "999999999999", 10, 10 * time.Second},
		// Each booking holds at most a capacity: 16 of them, 1.6 s here.
		{"a pause spans at most 16 fill times", "30", 1, 1600 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr, api, done := newTransport(t, ratelimit.PerSecond(10).WithBurst(c.burst))
				defer done()
				tr.MaxPause = 10 * time.Second
				api.retryAfter = c.retryAfter
				if c.retryAfter == "" {
					api.retryAfter = time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)
				}
				api.status.Store(http.StatusTooManyRequests)
				cl := &http.Client{Transport: tr}
				resp, err := send(t, cl, context.Background())
				if err != nil || resp.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("the 429 is not returned: %v, %v", resp, err)
				}
				api.status.Store(http.StatusOK)
				send(t, cl, context.Background())
				if got := api.times[1]; got < c.next || got > c.next+100*time.Millisecond {
					t.Fatalf("the next request went at %v, want %v (within a token)", got, c.next)
				}
			})
		})
	}
}

// freezingStore answers from memory until frozen; then each call hangs
// for 10 seconds, as a Redis that stopped answering does.
type freezingStore struct {
	mem    *memory.Store
	frozen atomic.Bool
}

func (s *freezingStore) hang(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return errors.New("frozen")
	}
}

func (s *freezingStore) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	if s.frozen.Load() {
		return ratelimit.Result{}, s.hang(ctx)
	}
	return s.mem.AllowN(ctx, key, limit, n)
}

func (s *freezingStore) ReserveN(ctx context.Context, key string, limit ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	if s.frozen.Load() {
		return ratelimit.Reservation{}, s.hang(ctx)
	}
	return s.mem.ReserveN(ctx, key, limit, n, maxWait)
}

func (s *freezingStore) CancelReservation(ctx context.Context, key string, limit ratelimit.Limit, r ratelimit.Reservation) error {
	return s.mem.CancelReservation(ctx, key, limit, r)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransport429OnAFrozenStore: the pause a 429 books is a store call
// like any other, within the time budget: the 429 comes back after one
// budget, not after the frozen store's own timeout.
func TestTransport429OnAFrozenStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &freezingStore{mem: memory.New(memory.WithSweepInterval(0))}
		defer store.mem.Close()
		var errs atomic.Int32
		l, err := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("partner"), ratelimit.WithPlainKeys(),
			ratelimit.WithErrorHandler(func(*http.Request, error) { errs.Add(1) }))
		if err != nil {
			t.Fatal(err)
		}
		api := &stubAPI{start: time.Now(), retryAfter: "30"}
		api.status.Store(http.StatusTooManyRequests)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			store.frozen.Store(true) // the token is taken: Redis stops answering
			return api.RoundTrip(r)
		})
		c := &http.Client{Transport: &ratelimit.Transport{Limiter: l, Base: base}}
		start := time.Now()
		resp, err := send(t, c, context.Background())
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("the 429 is not returned: %v, %v", resp, err)
		}
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Fatalf("the 429 came back after %v, past the time budget %v", took, 100*time.Millisecond)
		}
		if errs.Load() != 1 {
			t.Fatalf("the error handler heard of %d failures, want 1", errs.Load())
		}
	})
}

func TestTransportWithoutLimiterWaitErrors(t *testing.T) {
	tr, _, done := newTransport(t, ratelimit.PerSecond(1))
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := send(t, &http.Client{Transport: tr}, ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request: %v, want context.Canceled", err)
	}
}

func ExampleTransport() {
	store := memory.New() // a Redis store shares the budget between instances
	defer store.Close()
	budget, _ := ratelimit.New(store, ratelimit.PerMinute(100), ratelimit.WithName("partner-api"))
	client := &http.Client{Transport: &ratelimit.Transport{Limiter: budget}}
	_ = client // client.Get("https://api.example.com/v1/things") waits for its token
	fmt.Println(budget)
	// Output: partner-api: 100 per 1m
}

// A budget per host holds however the URL spells the host, as when the
// URLs come from users (webhooks).
func ExampleTransport_hostSpellings() {
	store := memory.New()
	defer store.Close()
	budget, _ := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("webhooks"), ratelimit.WithPlainKeys())
	client := &http.Client{Transport: &ratelimit.Transport{Limiter: budget, Base: &stubAPI{}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, url := range []string{"https://hooks.example.com/a", "https://HOOKS.Example.com.:443/b"} {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, nil)
		if resp, err := client.Do(req); err != nil {
			fmt.Println(url, "not sent: the host's budget is spent")
		} else {
			resp.Body.Close()
			fmt.Println(url, resp.StatusCode)
		}
	}
	// Output:
	// https://hooks.example.com/a 200
	// https://HOOKS.Example.com.:443/b not sent: the host's budget is spent
}

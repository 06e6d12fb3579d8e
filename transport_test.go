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

package ratelimit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// tokenCounter is a store that counts the tokens taken from it: those of
// allowed AllowN calls and of granted bookings, less the bookings given
// back. Its clock stands still, so nothing refills.
type tokenCounter struct {
	mem   *memory.Store
	mu    sync.Mutex
	taken int
	keys  map[string]bool
}

func newTokenCounter(t *testing.T) *tokenCounter {
	start := time.Now()
	mem := memory.New(memory.WithClock(func() time.Time { return start }), memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	return &tokenCounter{mem: mem, keys: map[string]bool{}}
}

func (s *tokenCounter) add(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken += n
	s.keys[key] = true
}

func (s *tokenCounter) Taken() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

func (s *tokenCounter) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	r, err := s.mem.AllowN(ctx, key, limit, n)
	if err == nil && r.Allowed {
		s.add(key, n)
	}
	return r, err
}

func (s *tokenCounter) ReserveN(ctx context.Context, key string, limit ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	r, err := s.mem.ReserveN(ctx, key, limit, n, maxWait)
	if err == nil && r.Allowed {
		s.add(key, r.Tokens)
	}
	return r, err
}

func (s *tokenCounter) CancelReservation(ctx context.Context, key string, limit ratelimit.Limit, r ratelimit.Reservation) error {
	err := s.mem.CancelReservation(ctx, key, limit, r)
	if err == nil && r.Allowed {
		s.add(key, -r.Tokens) // nothing is given back once its instant is past: the clock stands still
	}
	return err
}

// countingTransport returns a Transport over a budget of capacity calls
// that never refills, on a store that counts the tokens taken.
func countingTransport(t *testing.T, capacity int, base http.RoundTripper) (*ratelimit.Transport, *tokenCounter) {
	store := newTokenCounter(t)
	l, err := ratelimit.New(store, ratelimit.PerHour(capacity), ratelimit.WithName("partner"), ratelimit.WithPlainKeys())
	if err != nil {
		t.Fatal(err)
	}
	return &ratelimit.Transport{Limiter: l, Base: base}, store
}

// callAPI sends a GET to url through c, with a deadline that comes long before
// a token of an empty budget, so that a call without one fails at once.
func callAPI(c *http.Client, url string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func TestTransportKeysTheCanonicalHost(t *testing.T) {
	api := &stubAPI{start: time.Now()}
	tr, store := countingTransport(t, 2, api)
	c := &http.Client{Transport: tr}
	// Six spellings of one host, two calls each, on a budget of 2.
	for _, u := range []string{
		"https://api.example.com/v1", "https://API.Example.COM/v1", "https://api.example.com:443/v1",
		"https://api.example.com./v1", "http://api.example.com:80/v1", "https://ＡＰＩ.example.com:0443/v1",
	} {
		for range 2 {
			callAPI(c, u)
		}
	}
	if n := len(api.times); n != 2 {
		t.Fatalf("%d calls reached the API through a budget of 2", n)
	}
	if len(store.keys) != 1 {
		t.Fatalf("the budget was kept under %d keys, want 1: %v", len(store.keys), store.keys)
	}
	// Another host, and another port of the same host, are budgets of their own.
	for _, u := range []string{"https://api.example.org/v1", "https://api.example.com:8443/v1"} {
		if _, err := callAPI(c, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	if n := len(api.times); n != 4 {
		t.Fatalf("%d calls reached the API, want 4", n)
	}
}

// closingServer is an API that, for its request number closeOn, reads the
// request and closes the connection without an answer, as a server that
// ends a kept-alive connection does. seen counts the requests it read.
func closingServer(t *testing.T, closeOn int32) (srv *httptest.Server, seen *atomic.Int32) {
	seen = new(atomic.Int32)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) == closeOn {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func TestTransportEveryAttemptTakesAToken(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity int
		secondOK bool  // the second call is answered
		seen     int32 // requests the server read
	}{
		// The second call is sent twice (net/http retries a GET on a
		// kept-alive connection the server closed): 3 requests, 3 tokens.
		{"a retry takes a token of its own", 3, true, 3},
		// No token for the retry: it is not sent.
		{"a retry without a token is not sent", 2, false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, seen := closingServer(t, 2)
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			tr, store := countingTransport(t, c.capacity, base)
			cl := &http.Client{Transport: tr}
			if _, err := callAPI(cl, srv.URL); err != nil {
				t.Fatal(err)
			}
			resp, err := callAPI(cl, srv.URL) // on the kept-alive connection
			if ok := err == nil && resp.StatusCode == http.StatusOK; ok != c.secondOK {
				t.Fatalf("the second call: %v, %v; want answered %v", resp, err, c.secondOK)
			}
			if err != nil && !strings.Contains(err.Error(), "got no token") {
				t.Fatalf("the second call failed for another reason: %v", err)
			}
			if got, taken := seen.Load(), store.Taken(); got != c.seen || int(got) != taken {
				t.Fatalf("the server read %d requests (want %d); %d tokens were taken", got, c.seen, taken)
			}
		})
	}
}

func TestTransportHTTP2TakesOneTokenPerRequest(t *testing.T) {
	var seen atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	base := srv.Client().Transport
	tr, store := countingTransport(t, 5, base)
	c := &http.Client{Transport: tr}
	for range 3 {
		resp, err := callAPI(c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("the call went over %s, want HTTP/2", resp.Proto)
		}
	}
	if got, taken := seen.Load(), store.Taken(); got != 3 || taken != 3 {
		t.Fatalf("the server read %d requests, %d tokens were taken; want 3 and 3", got, taken)
	}
}

// bodyAPI answers status, and keeps the context its request came with.
type bodyAPI struct {
	status int
	ctx    context.Context
}

type rwBody struct {
	io.Reader
	io.Writer
}

func (rwBody) Close() error { return nil }

func (b *bodyAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	b.ctx = r.Context()
	var body io.ReadCloser = io.NopCloser(strings.NewReader("ok"))
	if b.status == http.StatusSwitchingProtocols {
		body = rwBody{strings.NewReader("ok"), io.Discard} // as net/http's
	}
	return &http.Response{StatusCode: b.status, Header: http.Header{}, Request: r, Body: body}, nil
}

func TestTransportResponseOutlivesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name     string
		status   int
		writable bool
	}{
		{"a response", http.StatusOK, false},
		{"101 keeps its body's Write", http.StatusSwitchingProtocols, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := &bodyAPI{status: c.status}
			tr, _ := countingTransport(t, 5, api)
			req, _ := http.NewRequest("GET", "https://api.example.com/v1", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Request != req {
				t.Fatal("the response's Request is not the caller's")
			}
			if _, ok := resp.Body.(io.Writer); ok != c.writable {
				t.Fatalf("the body is an io.Writer: %v, want %v", ok, c.writable)
			}
			if err := api.ctx.Err(); err != nil {
				t.Fatalf("the request's context ended before its body was read: %v", err)
			}
			resp.Body.Close()
			if api.ctx.Err() == nil {
				t.Fatal("the request's context is still alive after its body was closed")
			}
		})
	}
}

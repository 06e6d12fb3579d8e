package redisstore_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// countingAPI answers 200 and counts the requests that reach it.
type countingAPI struct{ sent atomic.Int32 }

func (a *countingAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	a.sent.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// TestTransportSharesOneBudgetAcrossInstances: two instances of a service
// (two stores, two limiters, two transports) on one Redis send 3 calls to
// a third party that allows 3 a minute, between them, and a fourth from
// either waits past its deadline and is never sent.
func TestTransportSharesOneBudgetAcrossInstances(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			api := &countingAPI{}
			var clients []*http.Client
			p := redisstore.WithPrefix(prefix(t))
			for range 2 {
				// A budget of a minute: the calls' own deadlines bound them.
				l, err := ratelimit.New(redisstore.New(c, p), ratelimit.PerMinute(3),
					ratelimit.WithName("partner"), ratelimit.WithPlainKeys(), ratelimit.WithTimeout(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				clients = append(clients, &http.Client{Transport: &ratelimit.Transport{Limiter: l, Base: api}})
			}
			call := func(cl *http.Client, timeout time.Duration) error {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.example.com/v1", nil)
				resp, err := cl.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			for i := range 3 {
				if err := call(clients[i%2], 5*time.Second); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			for i, cl := range clients {
				if err := call(cl, time.Second); err == nil {
					t.Fatalf("instance %d sent a fourth call within the minute", i)
				}
			}
			if n := api.sent.Load(); n != 3 {
				t.Fatalf("the API got %d calls, want 3", n)
			}
		})
	}
}

package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestCountedGuessesAcrossAppServers: wrong passwords sent at once to
// three app servers reach the handler at most as often as the budget
// allows, each taking its cost before the handler; right passwords give
// theirs back, in the store every server shares.
func TestCountedGuessesAcrossAppServers(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			account := func(r *http.Request) (string, error) { return "acct:" + r.URL.Query().Get("account"), nil }
			ls := fleetOf(t, s, 3, ratelimit.PerHour(5), ratelimit.WithKeyFunc(account),
				ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)),
				ratelimit.WithBlock(15*time.Minute), ratelimit.WithTimeout(5*time.Second))
			var reached atomic.Int64
			var hs []http.Handler
			for _, l := range ls {
				hs = append(hs, l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reached.Add(1)
					if r.URL.Query().Get("password") == "right" {
						w.WriteHeader(http.StatusNoContent)
						return
					}
					w.WriteHeader(http.StatusUnauthorized)
				})))
			}
			serve := func(i int, password string) int {
				w := httptest.NewRecorder()
				hs[i%len(hs)].ServeHTTP(w, httptest.NewRequest("POST", "/login?account=ann&password="+password, nil))
				return w.Code
			}
			for i := range 12 {
				if c := serve(i, "right"); c != http.StatusNoContent {
					t.Fatalf("right password %d: %d", i, c)
				}
			}
			reached.Store(0)
			var wg sync.WaitGroup
			for i := range 60 {
				wg.Go(func() { serve(i, "guess") })
			}
			wg.Wait()
			if n := reached.Load(); n != 5 {
				t.Fatalf("%d of 60 concurrent guesses reached the handler, want 5", n)
			}
			if res, err := ls[2].AllowN(context.Background(), "acct:ann", 0); err != nil || res.Allowed {
				t.Fatalf("the account after 5 failures: %+v, %v; want blocked", res, err)
			}
		})
	}
}

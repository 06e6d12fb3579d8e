package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestResponsesThatDoNotCountAreFreeOnTheFallback: with WithCountIf, a
// response that does not count costs nothing when the fallback admitted
// it while the store was down: not the fallback's share, and not the debt
// the store is charged once it answers. Ten right passwords during an
// outage, on a limit of five failed logins, all reach the handler; after
// it, five wrong ones still do, the sixth is refused.
func TestResponsesThatDoNotCountAreFreeOnTheFallback(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"default fallback", nil},
		{"memory fallback", []ratelimit.Option{ratelimit.WithFallback(memory.New(memory.WithSweepInterval(0)), 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
				l, err := ratelimit.New(store, ratelimit.PerHour(5), append(tt.opts,
					ratelimit.WithCountIf(func(status int) bool { return status >= 400 }),
					ratelimit.WithBreaker(nil), ratelimit.WithErrorHandler(func(*http.Request, error) {}))...)
				if err != nil {
					t.Fatal(err)
				}
				h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Password") != "right" {
						w.WriteHeader(http.StatusUnauthorized)
					}
				}))
				login := func(password string) int {
					r := httptest.NewRequest("POST", "/login", nil).WithContext(context.Background())
					r.Header.Set("X-Password", password)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, r)
					return rec.Code
				}
				store.down.Store(true)
				var during []int
				for range 10 {
					during = append(during, login("right"))
				}
				store.down.Store(false)
				var after []int
				for range 6 {
					after = append(after, login("wrong"))
				}
				if want := slices.Repeat([]int{200}, 10); !slices.Equal(during, want) {
					t.Errorf("right passwords while the store was down: %v, want %v", during, want)
				}
				if want := []int{401, 401, 401, 401, 401, 429}; !slices.Equal(after, want) {
					t.Errorf("wrong passwords once it answered: %v, want %v", after, want)
				}
			})
		})
	}
}

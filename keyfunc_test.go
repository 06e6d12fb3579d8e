package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestKeyByRoute(t *testing.T) {
	key := ratelimit.KeyByRoute()
	var got []string
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _ := key(r)
		got = append(got, k)
	})
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", record)
	outside := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record.ServeHTTP(w, r)
		mux.ServeHTTP(w, r)
	})
	tests := []struct {
		name string
		path string
		want []string // outside the mux, then inside
	}{
		{"a matched path is keyed by its pattern inside the mux only", "/items/1", []string{ratelimit.UnmatchedRouteKey, "route:GET /items/{id}"}},
		{"another id is the same route", "/items/2", []string{ratelimit.UnmatchedRouteKey, "route:GET /items/{id}"}},
		{"an unmatched path never reaches a limiter inside the mux", "/admin", []string{ratelimit.UnmatchedRouteKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			outside.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tt.path, nil))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("keys %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKeyByRouteBudgets: one client varying the id of /items/{id}, under
// 5 requests a minute per route and client.
func TestKeyByRouteBudgets(t *testing.T) {
	key := ratelimit.WithKeyFunc(ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.KeyByIP()))
	item := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	tests := []struct {
		name  string
		build func(store ratelimit.Store) http.Handler
		want  int
	}{
		{"a limiter wrapping the mux gives varied paths one budget", func(store ratelimit.Store) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /items/{id}", item)
			return ratelimit.Middleware(store, ratelimit.PerMinute(5), key)(mux)
		}, 5},
		{"a limiter inside the mux gives the route one budget", func(store ratelimit.Store) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /items/{id}", ratelimit.Middleware(store, ratelimit.PerMinute(5), key)(item))
			return mux
		}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			t.Cleanup(func() { store.Close() })
			h := tt.build(store)
			served := 0
			for i := range 50 {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", fmt.Sprintf("/items/%d", i), nil))
				if w.Code == http.StatusOK {
					served++
				}
			}
			if served != tt.want {
				t.Fatalf("%d of 50 requests served, want %d", served, tt.want)
			}
		})
	}
}

// A limiter that wraps the whole mux sees no pattern: every request shares
// one route key, whatever its path. Mount it inside the mux, as in
// ExampleKeyByRoute, for a key per route.
func ExampleKeyByRoute_outsideServeMux() {
	key := ratelimit.KeyByRoute()
	for _, path := range []string{"/items/1", "/items/2"} {
		k, _ := key(httptest.NewRequest("GET", path, nil))
		fmt.Println(k)
	}
	// Output:
	// route:unmatched
	// route:unmatched
}

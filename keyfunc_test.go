package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
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

type signedIn struct{}

// TestHeaderKeysNeverTakeAnotherKeyFuncsForm: a header named as the prefix
// of another key function's keys keys as "header:" + its name, so that a
// client choosing the header's value cannot spend another key's budget:
// with FirstOf(KeyByContext, KeyByHeader("User")), "User: alice" from a
// client that is not signed in is not the signed-in alice's key, and
// "Ip: 192.0.2.1" is not the address's.
func TestHeaderKeysNeverTakeAnotherKeyFuncsForm(t *testing.T) {
	header := func(name, value string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1"
		r.Header.Set(name, value)
		return r
	}
	signedInAs := func(user string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		return r.WithContext(context.WithValue(r.Context(), signedIn{}, user))
	}
	byUser := ratelimit.FirstOf(ratelimit.KeyByContext(signedIn{}), ratelimit.KeyByHeader("User"))
	tests := []struct {
		name       string
		key        ratelimit.KeyFunc
		forged     *http.Request
		real       ratelimit.KeyFunc
		realReq    *http.Request
		forgedWant string
	}{
		{"User", byUser, header("User", "alice"), byUser, signedInAs("alice"), "header:user:alice"},
		{"Ip", ratelimit.KeyByHeader("Ip"), header("Ip", "ip:192.0.2.1"), ratelimit.KeyByIP(), header("X", "y"), "header:ip:ip:192.0.2.1"},
		{"Route", ratelimit.KeyByHeader("Route"), header("Route", "GET /"), ratelimit.KeyByRoute(), header("X", "y"), "header:route:GET /"},
		{"Header", ratelimit.KeyByHeader("Header"), header("Header", "ip:x"), ratelimit.KeyByHeader("Ip"), header("Ip", "x"), "header:header:ip:x"},
		{"Echo", ratelimit.KeyByHeader("echo"), header("Echo", "id"), nil, nil, "header:echo:id"},
		{"X-API-Key", ratelimit.KeyByHeader("X-API-Key"), header("X-API-Key", "k"), nil, nil, "x-api-key:k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forged, err := tt.key(tt.forged)
			if err != nil || forged != tt.forgedWant {
				t.Fatalf("key of the header: %q, %v; want %q", forged, err, tt.forgedWant)
			}
			if tt.real == nil {
				return
			}
			if real, err := tt.real(tt.realReq); err != nil || real == forged {
				t.Fatalf("the forged header's key %q is the real key %q (%v)", forged, real, err)
			}
		})
	}
}

// TestBadKeyFuncsFailNew: a key function that cannot key any request (a
// header that is no header name, a context key no context can hold, a
// FirstOf or Compose of no parts or of a nil part) is an error of New
// wrapping ErrBadConfig, of an in-flight limit's too; key
// functions that can key a request are not.
func TestBadKeyFuncsFailNew(t *testing.T) {
	store := memory.New()
	defer store.Close()
	type userKey struct{}
	user := ratelimit.KeyByContext(userKey{})
	tests := []struct {
		name string
		key  ratelimit.KeyFunc
		want string // in New's error; "" for none
	}{
		{"KeyByHeader of no name", ratelimit.KeyByHeader(""), `KeyByHeader("")`},
		{"KeyByHeader of a name with a space", ratelimit.KeyByHeader("X API Key"), `KeyByHeader("X API Key")`},
		{"KeyByHeader of a name with a colon", ratelimit.KeyByHeader("X-Key:"), `KeyByHeader("X-Key:")`},
		{"FirstOf with a bad part", ratelimit.FirstOf(user, ratelimit.KeyByHeader("")), `KeyByHeader("")`},
		{"FirstOf with a nil part", ratelimit.FirstOf(user, nil), "FirstOf: key function 2 of 2 is nil"},
		{"Compose with a nil part", ratelimit.Compose(ratelimit.KeyByRoute(), nil), "Compose: key function 2 of 2 is nil"},
		{"Compose of FirstOf with a bad part", ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.FirstOf(ratelimit.KeyByHeader(" "))), `KeyByHeader(" ")`},
		{"KeyByHeader", ratelimit.KeyByHeader("X-API-Key"), ""},
		{"KeyByHeader of a token of every sort", ratelimit.KeyByHeader("X_Api.Key~1!#$%&'*+^`|"), ""},
		{"FirstOf", ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP()), ""},
		{"FirstOf of none", ratelimit.FirstOf(), "FirstOf(): no key functions"},
		{"Compose of none", ratelimit.Compose[ratelimit.KeyFunc](), "Compose(): no key functions"},
		{"KeyByContext of nil", ratelimit.KeyByContext(nil), "KeyByContext(<nil>)"},
		{"KeyByContext of a slice", ratelimit.KeyByContext([]string{"user"}), "KeyByContext([]string)"},
		{"KeyByContext of a struct holding a slice", ratelimit.KeyByContext(struct{ f any }{[]int{1}}), "KeyByContext(struct { f interface {} })"},
		{"KeyByContext of a struct", ratelimit.KeyByContext(userKey{}), ""},
		{"KeyByContext of a string", ratelimit.KeyByContext("user"), ""},
		{"Compose", ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.KeyByIP()), ""},
		{"a function of one's own", func(*http.Request) (string, error) { return "", nil }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, build := range []func() error{
				func() error {
					_, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithKeyFunc(tt.key))
					return err
				},
				func() error {
					_, err := inflight.New(memory.NewSlots(), 1, inflight.WithKeyFunc(tt.key))
					return err
				},
			} {
				err := build()
				if tt.want == "" {
					if err != nil {
						t.Fatalf("error %v, want none", err)
					}
					continue
				}
				if !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), tt.want) || strings.Count(err.Error(), "ratelimit: ") != 1 {
					t.Errorf("error %v, want an ErrBadConfig naming %s and the package once", err, tt.want)
				}
			}
		})
	}
}

package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

type contractKey struct{}

// TestLimitFunc: a limit from the app's database per request, with its
// headers (RateLimit-Policy lists every policy with the request's limits);
// an error or an invalid limit is the request's error.
func TestLimitFunc(t *testing.T) {
	store := memory.New()
	defer store.Close()
	contracts := map[string]ratelimit.Limit{"acme": ratelimit.PerMinute(3), "globex": ratelimit.PerMinute(7), "bad": {}}
	limitOf := func(ctx context.Context) (ratelimit.Limit, error) {
		l, ok := contracts[ctx.Value(contractKey{}).(string)]
		if !ok {
			return ratelimit.Limit{}, errors.New("no contract")
		}
		return l, nil
	}
	var policies []string
	l, err := ratelimit.New(store, ratelimit.PerSecond(1000), ratelimit.WithName("edge"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Customer")), ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "contract", LimitFunc: limitOf}),
		ratelimit.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) { policies = append(policies, d.Policy+" "+d.Limit.String()) }}),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(hello)
	serve := func(customer string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Customer", customer)
		r = r.WithContext(context.WithValue(r.Context(), contractKey{}, customer))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, c := range []struct {
		customer, limit string
		passes          int
	}{{"acme", "3", 3}, {"globex", "7", 7}} {
		passed := 0
		for i := range 10 {
			w := serve(c.customer)
			if i == 0 && (w.Header().Get("X-RateLimit-Limit") != c.limit || w.Header().Get("RateLimit-Policy") != `"edge";q=1000;w=1, "contract";q=`+c.limit+`;w=60`) {
				t.Fatalf("%s: limit %q, policy %q", c.customer, w.Header().Get("X-RateLimit-Limit"), w.Header().Get("RateLimit-Policy"))
			}
			if w.Code == 200 {
				passed++
			}
		}
		if passed != c.passes {
			t.Fatalf("%s: %d passed, want %d", c.customer, passed, c.passes)
		}
	}
	for _, customer := range []string{"bad", "unknown"} {
		if w := serve(customer); w.Code != 500 {
			t.Fatalf("%s: %d, want 500", customer, w.Code)
		}
	}
	if !strings.Contains(strings.Join(policies, ","), "contract 7 per 1m") {
		t.Fatalf("observed %v: want the policy label and the limit returned", policies)
	}
	if _, err := ratelimit.New(store, ratelimit.PerSecond(1), ratelimit.WithPolicy(ratelimit.Policy{Name: "c", Limit: ratelimit.PerSecond(1), LimitFunc: limitOf})); err == nil {
		t.Fatal("a LimitFunc beside a Limit accepted")
	}
}

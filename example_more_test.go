package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleLimit_Capacity() {
	fmt.Println(ratelimit.PerSecond(10).Capacity())
	fmt.Println(ratelimit.PerSecond(10).WithBurst(25).Capacity())
	fmt.Println(ratelimit.PerMinute(60).WithAlgorithm(ratelimit.FixedWindow).Capacity())
	// Output:
	// 10
	// 25
	// 60
}

func ExampleValidateCall() {
	err := ratelimit.ValidateCall("k", ratelimit.PerMinute(5), 6)
	fmt.Println(errors.Is(err, ratelimit.ErrCostExceedsCapacity), err)
	// Output: true ratelimit: cost exceeds capacity: n = 6, capacity 5
}

func ExampleKeyByHeader() {
	store := memory.New()
	defer store.Close()
	h := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))(hello)
	serveTimes(h, 2, "/", "X-API-Key", "k1")
	serveTimes(h, 1, "/") // no key: a client error, never a pass
	// Output:
	// 200 429
	// 400
}

func ExampleFirstOf() {
	store := memory.New()
	defer store.Close()
	key := ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())
	h := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithKeyFunc(key))(hello)
	serveTimes(h, 2, "/", "X-API-Key", "k1")
	serveTimes(h, 2, "/") // no key: limited by address
	// Output:
	// 200 429
	// 200 429
}

type userID struct{}

func ExampleKeyByContext() {
	store := memory.New()
	defer store.Close()
	limited := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithKeyFunc(ratelimit.KeyByContext(userID{})))(hello)
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-User"); u != "" { // stands in for real authentication
			r = r.WithContext(context.WithValue(r.Context(), userID{}, u))
		}
		limited.ServeHTTP(w, r)
	})
	serveTimes(auth, 2, "/", "X-User", "alice")
	serveTimes(auth, 1, "/")
	// Output:
	// 200 429
	// 401
}

func ExampleKeyByRoute() {
	store := memory.New()
	defer store.Close()
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", ratelimit.Middleware(store, ratelimit.PerHour(2), ratelimit.WithKeyFunc(ratelimit.KeyByRoute()))(hello))
	serveTimes(mux, 1, "/items/1")
	serveTimes(mux, 2, "/items/2") // the same route, so the same budget
	// Output:
	// 200
	// 200 429
}

func ExampleWithCost() {
	store := memory.New()
	defer store.Close()
	cost := ratelimit.WithCost(func(r *http.Request) int {
		if strings.HasPrefix(r.URL.Path, "/export") {
			return 5
		}
		return 1
	})
	h := ratelimit.Middleware(store, ratelimit.PerHour(10), cost)(hello)
	serveTimes(h, 3, "/export")
	// Output: 200 200 429
}

func ExampleWithSkip() {
	store := memory.New()
	defer store.Close()
	skip := ratelimit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" })
	h := ratelimit.Middleware(store, ratelimit.PerHour(1), skip)(hello)
	serveTimes(h, 3, "/healthz")
	serveTimes(h, 2, "/")
	// Output:
	// 200 200 200
	// 200 429
}

func ExampleProblemJSON() {
	store := memory.New()
	defer store.Close()
	h := ratelimit.Middleware(store, ratelimit.PerHour(1), ratelimit.WithDenyHandler(ratelimit.ProblemJSON()), ratelimit.WithName("search"))(hello)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Print(w.Body)
	// Output:
	// 429 application/problem+json
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"violated-policies":["search"]}
}

func ExampleWithFailClosed() {
	logErr := ratelimit.WithErrorHandler(func(_ *http.Request, err error) { fmt.Println("store:", err) })
	open := ratelimit.Middleware(downStore{}, ratelimit.PerHour(1), logErr)(hello)
	closed := ratelimit.Middleware(downStore{}, ratelimit.PerHour(1), logErr, ratelimit.WithFailClosed())(hello)
	serveTimes(open, 1, "/")
	serveTimes(closed, 1, "/")
	// Output:
	// store: connection refused
	// 200
	// store: connection refused
	// 503
}

func ExampleWithDenyHandler() {
	store := memory.New()
	defer store.Close()
	deny := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, "slow down, retry in %ss\n", w.Header().Get("Retry-After"))
	})
	h := ratelimit.Middleware(store, ratelimit.PerMinute(1), ratelimit.WithDenyHandler(deny))(hello)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Print(w.Body)
	// Output: slow down, retry in 60s
}

func ExampleWithHeaders() {
	store := memory.New()
	defer store.Close()
	h := ratelimit.Middleware(store, ratelimit.PerMinute(100), ratelimit.WithHeaders(ratelimit.HeadersIETF), ratelimit.WithName("api"))(hello)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Println(w.Header().Get("RateLimit-Policy"))
	fmt.Println(w.Header().Get("RateLimit"))
	fmt.Println(w.Header().Get("X-RateLimit-Limit") == "")
	// Output:
	// "api";q=100;w=60
	// "api";r=99;t=1
	// true
}

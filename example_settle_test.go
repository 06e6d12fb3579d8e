package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleLimiter_BeginKey() {
	// A call that is no HTTP request (a gRPC call, a job), counted only
	// when it fails: the cost is taken first and given back on success.
	store := memory.New()
	defer store.Close()
	login, _ := ratelimit.New(store, ratelimit.PerHour(2),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK} {
		a, ok, code := login.BeginKey(context.Background(), "user:ann", http.Header{})
		if !ok {
			fmt.Println(code)
			continue
		}
		a.Done(status) // the call's answer
		fmt.Println(status)
	}
	// Output:
	// 200
	// 401
	// 401
	// 429
}

func ExampleLimiter_BeginWithKeyFunc() {
	// An adapter that keys requests on its framework's context.
	store := memory.New()
	defer store.Close()
	l, _ := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusForbidden)))
	user := func(*http.Request) (string, error) { return "user:bo", nil }
	w, r := &discard{h: http.Header{}}, (&http.Request{Method: "GET"}).WithContext(context.Background())
	a, ok := l.BeginWithKeyFunc(w, r, user)
	a.Done(http.StatusOK) // not counted: given back
	_, again := l.BeginWithKeyFunc(w, r, user)
	fmt.Println(ok, again)
	// Output: true true
}

func ExampleValidateRefund() {
	err := ratelimit.ValidateRefund("k", ratelimit.PerMinute(10), 1, -time.Second)
	fmt.Println(err)
	// Output: ratelimit: negative refund age: -1s
}

// discard is a ResponseWriter that keeps only headers.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleWithCountIf() {
	// 3 failed logins an hour per address; successful ones are free.
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(3), ratelimit.WithName("login"),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	h := limiter.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	for _, password := range []string{"right", "right", "wrong", "wrong", "wrong", "right"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/login?password="+password, nil))
		fmt.Print(w.Code, " ")
	}
	fmt.Println()
	// Output: 200 200 401 401 401 429
}

func ExampleCountStatus() {
	count := ratelimit.CountStatus(401, 403)
	fmt.Println(count(401), count(200))
	// Output: true false
}

func ExampleLimiter_Begin() {
	// An adapter takes the cost before its handler and settles it after:
	// a failed login is kept, a right password given back.
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithName("login"),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized, http.StatusOK} {
		w, r := httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil)
		if a, ok := limiter.Begin(w, r); ok {
			w.WriteHeader(status) // the framework's handler
			a.Done(status)
		}
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 401
	// 429
}

func ExampleLimiter_Charge() {
	// 1,000 LLM tokens a minute per customer: a call passes if the budget
	// has room for one, and is charged what it used once it is done.
	store := memory.New()
	defer store.Close()
	llm, _ := ratelimit.New(store, ratelimit.PerMinute(1000), ratelimit.WithName("llm"))
	ctx := context.Background()
	res, _ := llm.Allow(ctx, "customer-9")
	fmt.Println(res.Allowed)
	llm.Charge(ctx, "customer-9", 1200-1) // the call used 1,200 tokens
	res, _ = llm.Allow(ctx, "customer-9") // the debt is paid first: wait
	fmt.Println(res.Allowed)
	// Output:
	// true
	// false
}

func ExampleReportStatus() {
	// A handler that answers on a hijacked connection reports the status
	// its answer counts as.
	store := memory.New()
	defer store.Close()
	login, _ := ratelimit.New(store, ratelimit.PerHour(5),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	h := login.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ratelimit.ReportStatus(w, http.StatusOK) // before Hijack, in a real handler
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ws", nil))
	// The request's key, as KeyByIP makes it: the 200 gave its token back.
	res, _ := login.AllowN(context.Background(), "ip:192.0.2.1", 0)
	fmt.Println(res.Remaining)
	// Output: 5
}

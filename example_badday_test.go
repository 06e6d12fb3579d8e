package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleWithTimeout() {
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	h := ratelimit.Middleware(hangingStore{}, ratelimit.PerMinute(100), quiet,
		ratelimit.WithTimeout(20*time.Millisecond), ratelimit.WithFailClosed())(hello)
	start := time.Now()
	serveTimes(h, 1, "/")
	fmt.Println(time.Since(start) < time.Second)
	// Output:
	// 503
	// true
}

func ExampleWithFallback() {
	// While Redis (here a store that is down) fails, each of 4 app servers
	// enforces a quarter of the limit on its own.
	local := memory.New()
	defer local.Close()
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	h := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(12), quiet, ratelimit.WithFallback(local, 4))(hello)
	serveTimes(h, 4, "/")
	// Output:
	// 200 200 200 429
}

func ExampleNewBreaker() {
	// One breaker for every limiter on the same Redis: after 3 failures in a
	// row they all stop calling it for 2 s, then one request probes it.
	breaker := ratelimit.NewBreaker(3, 2*time.Second)
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	home := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(10), ratelimit.WithName("home"), quiet, ratelimit.WithBreaker(breaker))(hello)
	api := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(60), ratelimit.WithName("api"), quiet, ratelimit.WithBreaker(breaker))(hello)
	serveTimes(home, 2, "/")
	fmt.Println(breaker.State())
	serveTimes(api, 1, "/api/")
	fmt.Println(breaker.State())
	// Output:
	// 200 200
	// closed
	// 200
	// open
}

func ExampleWithDenyCache() {
	// The deny cache is on by default for remote stores such as Redis; on
	// the memory store it has nothing to save, but it can be turned on.
	store := &countingStore{Store: memory.New()}
	h := ratelimit.Middleware(store, ratelimit.PerHour(2), ratelimit.WithDenyCache(10_000))(hello)
	serveTimes(h, 10, "/")
	fmt.Println("store calls:", store.calls.Load())
	// Output:
	// 200 200 429 429 429 429 429 429 429 429
	// store calls: 2
}

func ExampleWithObserver() {
	counts := map[ratelimit.Outcome]int{}
	h := ratelimit.Middleware(memory.New(), ratelimit.PerMinute(3), ratelimit.WithName("home"),
		ratelimit.WithObserver(ratelimit.Observer{
			Decision: func(d ratelimit.Decision) { counts[d.Outcome]++ },
		}))(hello)
	serveTimes(h, 5, "/")
	fmt.Println(counts[ratelimit.OutcomeAllowed], "allowed,", counts[ratelimit.OutcomeDenied], "denied")
	// Output:
	// 200 200 200 429 429
	// 3 allowed, 2 denied
}

func ExampleWithDryRun() {
	counts := map[ratelimit.Outcome]int{}
	h := ratelimit.Middleware(memory.New(), ratelimit.PerMinute(3), ratelimit.WithDryRun(),
		ratelimit.WithObserver(ratelimit.Observer{
			Decision: func(d ratelimit.Decision) { counts[d.Outcome]++ },
		}))(hello)
	serveTimes(h, 5, "/")
	fmt.Println(counts[ratelimit.OutcomeDryRunDenied], "would have been denied")
	// Output:
	// 200 200 200 200 200
	// 2 would have been denied
}

func ExampleLimiter_AllowN() {
	// Outside HTTP (a job queue, an RPC), decide on a key of your own: the
	// same policies, deny cache, time budget, breaker and failure policy.
	store := memory.New()
	defer store.Close()
	exports, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithName("exports"))
	if err != nil {
		panic(err)
	}
	for _, cost := range []int{4, 4, 4} {
		res, err := exports.AllowN(context.Background(), "user:42", cost)
		fmt.Println(res.Allowed, res.Remaining, err)
	}
	// Output:
	// true 6 <nil>
	// true 2 <nil>
	// false 2 <nil>
}

func ExampleWithFailOpen() {
	// A limiter on a store that is not Local falls back to a local store of
	// its own while it fails; WithFailOpen lets every request through.
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	byDefault := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(2), quiet)(hello)
	open := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(2), quiet, ratelimit.WithFailOpen())(hello)
	serveTimes(byDefault, 3, "/")
	serveTimes(open, 3, "/")
	// Output:
	// 200 200 429
	// 200 200 200
}

func ExampleWithInstances() {
	// While the store fails, each of 3 app servers enforces a third of the
	// limit with the default local fallback.
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	h := ratelimit.Middleware(downStore{}, ratelimit.PerMinute(6), quiet, ratelimit.WithInstances(3))(hello)
	serveTimes(h, 3, "/")
	// Output:
	// 200 200 429
}

package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// Limit every client address to 2 requests per minute.
func ExampleMiddleware() {
	store := memory.New()
	defer store.Close()

	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	handler := ratelimit.Middleware(store, ratelimit.PerMinute(2))(hello)

	for range 3 {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d remaining=%s retry-after=%q\n", w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 remaining=1 retry-after=""
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="30"
}

// Limit per API key, falling back to the client address, with IETF headers.
func ExampleNew() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerHour(1000),
		ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithHeaders(ratelimit.HeadersIETF),
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", limiter.Handler(http.NotFoundHandler()))

	r := httptest.NewRequest("GET", "/api/items", nil)
	r.Header.Set("X-API-Key", "key-1")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Header().Get("RateLimit-Policy"))
	fmt.Println(w.Header().Get("RateLimit"))
	// Output:
	// "api";q=1000;w=3600
	// "api";r=999;t=4
}

// Allow decides on a key without writing anything, for code that answers
// itself.
func ExampleLimiter_Allow() {
	// A stopped clock keeps the printed wait exact; a store's default clock
	// is time.Now, and the wait shrinks as it runs.
	now := time.Date(2026, time.January, 1, 12, 0, 0, 0, time.UTC)
	store := memory.New(memory.WithClock(func() time.Time { return now }))
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1))
	for range 2 {
		res, err := limiter.Allow(context.Background(), "ip:192.0.2.1")
		fmt.Println(res.Allowed, res.RetryAfter, err)
	}
	// Output:
	// true 0s <nil>
	// false 100ms <nil>
}

// Behind a load balancer, believe X-Forwarded-For only from its addresses.
func ExampleKeyByIP() {
	key := ratelimit.KeyByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")))

	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.5:4711" // the load balancer
	r.Header.Set("X-Forwarded-For", "203.0.113.9, 198.51.100.7")
	k, _ := key(r)
	fmt.Println(k)

	r.RemoteAddr = "[2001:db8:1:2::99]:4711" // a client, straight in
	k, _ = key(r)
	fmt.Println(k)
	// Output:
	// ip:198.51.100.7
	// ip:2001:db8:1:2::/64
}

func ExampleCompose() {
	key := ratelimit.Compose(ratelimit.KeyByRoute(), ratelimit.KeyByIP())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		k, _ := key(r)
		fmt.Println(k)
	})
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/42", nil))
	// Output: route:GET /items/{id}|ip:192.0.2.1
}

func ExampleLimit_String() {
	fmt.Println(ratelimit.PerMinute(100))
	fmt.Println(ratelimit.PerSecond(10).WithBurst(20))
	fmt.Println(ratelimit.Limit{Rate: 5, Period: 90 * time.Minute, Algorithm: ratelimit.SlidingLog})
	// Output:
	// 100 per 1m
	// 10 per 1s, burst 20
	// 5 per 1h30m (sliding log)
}

func ExampleLimit_Validate() {
	err := ratelimit.Limit{Rate: 10}.Validate()
	fmt.Println(err)
	// Output: ratelimit: invalid limit: period 0s must be positive
}

func ExampleStore() {
	store := memory.New()
	defer store.Close()
	ctx := context.Background()
	for _, n := range []int{3, 3, 0} {
		res, _ := store.AllowN(ctx, "user:7", ratelimit.PerMinute(5), n)
		fmt.Printf("n=%d allowed=%v remaining=%d\n", n, res.Allowed, res.Remaining)
	}
	// Output:
	// n=3 allowed=true remaining=2
	// n=3 allowed=false remaining=2
	// n=0 allowed=true remaining=2
}

// Policies lists what a limiter enforces, its own limit first.
func ExampleLimiter_Policies() {
	store := memory.New()
	defer store.Close()
	l, _ := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(1000)}))
	for _, p := range l.Policies() {
		fmt.Println(p.Name, p.Limit)
	}
	// Output:
	// api 10 per 1s
	// hourly 1000 per 1h
}

// A framework adapter keys requests on what its own context knows.
func ExampleLimiter_AdmitWithKeyFunc() {
	store := memory.New()
	defer store.Close()
	l, _ := ratelimit.New(store, ratelimit.PerHour(1))
	tenant := func(r *http.Request) (string, error) { return "tenant:" + r.URL.Query().Get("t"), nil }
	for _, t := range []string{"a", "a", "b"} {
		w := httptest.NewRecorder()
		fmt.Println(t, l.AdmitWithKeyFunc(w, httptest.NewRequest("GET", "/?t="+t, nil), tenant))
	}
	// Output:
	// a true
	// a false
	// b true
}

// Clients of one /48 share a budget, and IPv4 ones of one /24.
func ExampleGroupIPv6ByPrefix() {
	key := ratelimit.KeyByIP(clientip.GroupIPv6ByPrefix(48), clientip.GroupIPv4ByPrefix(24))
	for _, remote := range []string{"[2001:db8:1:2::9]:1", "[2001:db8:1:ffff::1]:1", "203.0.113.7:1"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		k, _ := key(r)
		fmt.Println(k)
	}
	// Output:
	// ip:2001:db8:1::/48
	// ip:2001:db8:1::/48
	// ip:203.0.113.0/24
}

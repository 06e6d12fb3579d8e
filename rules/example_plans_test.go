package rules_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// Plans: the app's authentication knows each API key's plan and puts it in
// the request's context; the rule decides under that plan's limits, and
// RateLimit-Policy names the plan.
func ExampleConfig_Handler_plans() {
	cfg, err := rules.Parse([]byte(`
plans:
  free: {rate: 60, period: 1m}
  pro: {rate: 600, period: 1m}
rules:
  - name: api
    match: /api/
    key: header:X-API-Key
    headers: ietf
    rate: 1000
    period: 1m
    plans: [free, pro]
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	limited, err := cfg.Handler(store, http.NotFoundHandler())
	if err != nil {
		panic(err)
	}
	plans := map[string]string{"key-a": "free", "key-b": "pro"} // the app's customers
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plan := plans[r.Header.Get("X-API-Key")]
		limited.ServeHTTP(w, r.WithContext(ratelimit.ContextWithPlan(r.Context(), plan)))
	})
	for _, key := range []string{"key-a", "key-b"} {
		r := httptest.NewRequest("GET", "/api/items", nil)
		r.Header.Set("X-API-Key", key)
		w := httptest.NewRecorder()
		auth.ServeHTTP(w, r)
		fmt.Println(w.Header().Get("RateLimit-Policy"))
	}
	// Output:
	// "api";q=1000;w=60, "api-1m.free";q=60;w=60
	// "api";q=1000;w=60, "api-1m.pro";q=600;w=60
}

// Count: only failed logins (401, 403) take the budget, so a user who
// types the right password is never limited, and a guesser is after 3.
func ExampleConfig_Handler_count() {
	cfg, err := rules.Parse([]byte(`
rules:
  - name: login
    match: "POST /login"
    rate: 3
    period: 15m
    count: [401, 403]
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	h, err := cfg.Handler(store, app)
	if err != nil {
		panic(err)
	}
	for _, password := range []string{"right", "right", "right", "right", "wrong", "wrong", "wrong", "right"} {
		r := httptest.NewRequest("POST", "/login", nil)
		r.Header.Set("Authorization", password)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Print(w.Code, " ")
	}
	fmt.Println()
	// Output: 200 200 200 200 401 401 401 429
}

// Block: once denied, the address waits out the block, a quarter of an
// hour, not the next second's token.
func ExampleConfig_Handler_block() {
	cfg, err := rules.Parse([]byte(`
rules:
  - {name: login, match: "POST /login", rate: 1, period: 1s, block: 15m}
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := cfg.Handler(store, http.NotFoundHandler())
	if err != nil {
		panic(err)
	}
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
		fmt.Println(w.Code, w.Header().Values("Retry-After"))
	}
	// Output:
	// 404 []
	// 429 [900]
}

// The file's plans, as the file names them, and a rule's copy, its limits
// named as the rule's policies.
func ExamplePlan() {
	cfg, err := rules.Parse([]byte(`
plans:
  free: [{rate: 60, period: 1m}, {name: daily, rate: 1000, period: day}]
  pro: [{rate: 600, period: 1m}, {name: daily, rate: 100000, period: day}]
rules:
  - {name: api, match: /api/, rate: 1000, period: 1m, plans: [free, pro]}
`))
	if err != nil {
		panic(err)
	}
	for _, pl := range cfg.Plans {
		for _, l := range pl.Limits {
			fmt.Printf("%s: %q %v\n", pl.Name, l.Name, l.Limit)
		}
	}
	for _, pl := range cfg.Rules[0].Plans {
		for _, l := range pl.Limits {
			fmt.Printf("api, %s: %q %v\n", pl.Name, l.Name, l.Limit)
		}
	}
	// Output:
	// free: "" 60 per 1m
	// free: "daily" 1000 per day (UTC)
	// pro: "" 600 per 1m
	// pro: "daily" 100000 per day (UTC)
	// api, free: "api-1m" 60 per 1m
	// api, free: "daily" 1000 per day (UTC)
	// api, pro: "api-1m" 600 per 1m
	// api, pro: "daily" 100000 per day (UTC)
}

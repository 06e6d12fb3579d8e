package rules_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func ExampleParse() {
	cfg, err := rules.Parse([]byte(`
rules:
  - name: login
    match: "POST /login"
    rate: 5
    period: 15m
    algorithm: sliding-log
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Rules[0].Name, cfg.Rules[0].Limit)
	// Output: login 5 per 15m (sliding log)
}

// Several limits on one rule: 10 a second with bursts of 20 and 1,000 an
// hour per API key (else per address), and a per-address ceiling.
func ExampleParse_limits() {
	cfg, err := rules.Parse([]byte(`
rules:
  - name: api
    match: "GET /api/"
    key: [header:X-API-Key, ip]
    limits:
      - {rate: 10, period: 1s, burst: 20}
      - {rate: 1000, period: 1h}
      - {name: api-per-ip, rate: 2000, period: 1h, key: ip}
`))
	if err != nil {
		panic(err)
	}
	for _, l := range cfg.Rules[0].Limits {
		fmt.Println(l.Name, l.Limit, l.Key)
	}
	fmt.Println(cfg.Rules[0])
	// Output:
	// api 10 per 1s, burst 20 []
	// api-1h 1000 per 1h []
	// api-per-ip 2000 per 1h [ip]
	// GET /api/ api: 10 per 1s, burst 20 per header:X-API-Key else ip + api-1h: 1000 per 1h per header:X-API-Key else ip + api-per-ip: 2000 per 1h per ip
}

func ExampleParse_error() {
	_, err := rules.Parse([]byte(`
rules:
  - name: api
    match: /api/
    rate: 60
    period: 1m
    burts: 10
`))
	fmt.Println(err)
	// Output: rules: line 7: rule "api": unknown field "burts" (fields: name, match, rate, period, timezone, burst, algorithm, key, limits, plans, cost, headers, dry_run, on_error, timeout, problem_json, deny_cache, breaker, count, block)
}

func ExampleConfig_Handler() {
	cfg, err := rules.Parse([]byte(`
rules:
  - {name: home, match: "GET /{$}", rate: 1, period: 1m}
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()

	app := http.NewServeMux()
	app.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	handler, err := cfg.Handler(store, app)
	if err != nil {
		panic(err)
	}
	for range 2 {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 429
}

// The user key: WithUser says who the request is from, here a header that
// stands in for authentication. Without a user, a request is answered 401.
func ExampleWithUser() {
	cfg, err := rules.Parse([]byte(`
rules:
  - {name: account, match: /account, key: user, rate: 1, period: 1m}
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	user := func(r *http.Request) (string, bool) {
		u := r.Header.Get("X-User") // in real life: the authenticated subject
		return u, u != ""
	}
	h, err := rules.NewHandler(cfg, store, http.NotFoundHandler(), rules.WithUser(user))
	if err != nil {
		panic(err)
	}
	for _, u := range []string{"alice", "alice", "bob", ""} {
		r := httptest.NewRequest("GET", "/account", nil)
		if u != "" {
			r.Header.Set("X-User", u)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%q: %d\n", u, w.Code)
	}
	// Output:
	// "alice": 404
	// "alice": 429
	// "bob": 404
	// "": 401
}

// Reload swaps the rules while serving; an unchanged rule keeps its
// budget, and a bad file changes nothing.
func ExampleHandler_Reload() {
	cfg, err := rules.Parse([]byte(`
rules:
  - {name: home, match: "GET /{$}", rate: 2, period: 1m}
  - {name: api, match: /api/, rate: 60, period: 1m}
`))
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(cfg, store, http.NotFoundHandler())
	if err != nil {
		panic(err)
	}
	get := func(path string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w.Code
	}
	fmt.Println(get("/"))

	changes, err := h.Reload([]byte(`
rules:
  - {name: home, match: "GET /{$}", rate: 2, period: 1m}
  - {name: api, match: /api/, rate: 30, period: 1m}
  - {name: export, match: /export, rate: 1, period: 1h}
`))
	fmt.Println(changes, err)
	fmt.Println(get("/"), get("/")) // home kept its budget: one left

	_, err = h.Reload([]byte("rules:\n  - {name: home, match: /, rate: -1, period: 1m}\n"))
	fmt.Println(err)
	fmt.Println(h)
	// Output:
	// 404
	// added export; changed api <nil>
	// 404 429
	// rules: line 2: rule "home": invalid limit: rate -1 must be positive
	// GET /{$} home: 2 per 1m per ip; /api/ api: 30 per 1m per ip; /export export: 1 per 1h per ip
}

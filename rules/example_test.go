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

// Command example serves a few routes behind rate limits, to try the
// library with curl:
//
//	go run ./example                 # memory store, on :8080
//	go run ./example -redis localhost:6379
//	go run ./example -rules example/rules.yaml   # the limits from a YAML file
//
//	for i in $(seq 12); do curl -si localhost:8080/ | head -n 1; done
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

func main() {
	addr := flag.String("addr", ":8080", "address to serve on")
	redisAddr := flag.String("redis", "", "Redis host:port; empty: the in-memory store")
	rulesFile := flag.String("rules", "", "a YAML rules file to take the limits from; empty: the built-in ones")
	flag.Parse()

	store, storeName := newStore(*redisAddr)
	var handler http.Handler
	var err error
	if *rulesFile == "" {
		handler, err = routes(store)
	} else {
		handler, err = routesFromFile(store, *rulesFile)
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on %s with the %s store: / (10 per minute per IP), /api/ (per X-API-Key, else per IP), /export (costs 5 of 20 per minute)", *addr, storeName)
	srv := &http.Server{Addr: *addr, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func newStore(redisAddr string) (ratelimit.Store, string) {
	if redisAddr == "" {
		return memory.New(memory.WithMaxKeys(1_000_000)), "memory"
	}
	return redisstore.New(goredis.NewClient(&goredis.Options{Addr: redisAddr})), "Redis (" + redisAddr + ")"
}

// routes builds the example's handler: one limiter per route, sharing store.
func routes(store ratelimit.Store) (*http.ServeMux, error) {
	home, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithName("home"))
	if err != nil {
		return nil, err
	}
	api, err := ratelimit.New(store, ratelimit.PerMinute(60),
		ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithProblemJSON(),
	)
	if err != nil {
		return nil, err
	}
	export, err := ratelimit.New(store, ratelimit.PerMinute(20),
		ratelimit.WithName("export"),
		ratelimit.WithCost(func(*http.Request) int { return 5 }),
	)
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /{$}", home.Handler(text("hello\n")))
	mux.Handle("GET /api/", api.Handler(text(`{"items":[]}`+"\n")))
	mux.Handle("GET /export", export.Handler(text("a,b,c\n")))
	mux.Handle("GET /healthz", text("ok\n")) // not limited
	return mux, nil
}

// routesFromFile serves the same routes, limited by the rules in path.
func routesFromFile(store ratelimit.Store, path string) (http.Handler, error) {
	cfg, err := rules.Load(path)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", text("hello\n"))
	mux.Handle("GET /api/", text(`{"items":[]}`+"\n"))
	mux.Handle("GET /export", text("a,b,c\n"))
	mux.Handle("GET /healthz", text("ok\n"))
	return cfg.Handler(store, mux)
}

func text(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
}

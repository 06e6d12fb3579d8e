// Command example serves a few routes behind rate limits, to try the
// library with curl:
//
//	go run ./example                 # memory store, on :8080
//	go run ./example -redis localhost:6379
//	go run ./example -rules example/rules.yaml   # the limits from a YAML file
//	go run ./example -dry-run        # report, never refuse
//
//	for i in $(seq 12); do curl -si localhost:8080/ | head -n 1; done
//	curl -s localhost:8080/metrics | grep ratelimit_requests_total
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

func main() {
	addr := flag.String("addr", ":8080", "address to serve on")
	redisAddr := flag.String("redis", "", "Redis host:port; empty: the in-memory store")
	rulesFile := flag.String("rules", "", "a YAML rules file to take the limits from; empty: the built-in ones")
	dryRun := flag.Bool("dry-run", false, "decide and report every request, but refuse none")
	instances := flag.Int("instances", 1, "with -redis: app servers sharing Redis; while it fails, each enforces limit/instances locally")
	flag.Parse()

	store, storeName := newStore(*redisAddr)
	var fallback ratelimit.Store
	if *redisAddr != "" {
		// While Redis fails, decide locally with a share of each limit.
		fallback = memory.New(memory.WithMaxKeys(1_000_000))
	}
	root, limits, err := app(config{store: store, rulesFile: *rulesFile, dryRun: *dryRun, fallback: fallback, instances: *instances})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on %s with the %s store; limits: %s", *addr, storeName, limits)
	srv := &http.Server{Addr: *addr, Handler: root, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// config is what the example serves with.
type config struct {
	store     ratelimit.Store
	rulesFile string // empty: the built-in routes
	dryRun    bool
	fallback  ratelimit.Store // nil: none
	instances int
}

// app returns the example's handler: the limited routes, and /metrics
// (not limited), with a description of the limits it enforces.
func app(c config) (http.Handler, string, error) {
	reg := prometheus.NewRegistry()
	metrics, err := ratelimitprom.New(reg)
	if err != nil {
		return nil, "", err
	}
	opts := []ratelimit.Option{ratelimit.WithObserver(metrics.Observer())}
	if c.fallback != nil {
		opts = append(opts, ratelimit.WithFallback(c.fallback, max(c.instances, 1)))
	}
	if c.dryRun {
		opts = append(opts, ratelimit.WithDryRun())
	}
	var handler http.Handler
	var limits string
	if c.rulesFile == "" {
		handler, limits, err = routes(c.store, opts...)
	} else {
		handler, limits, err = routesFromFile(c.store, c.rulesFile, opts...)
	}
	if err != nil {
		return nil, "", err
	}
	root := http.NewServeMux()
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	root.Handle("/", handler)
	return root, limits, nil
}

// newStore returns the store, with the Redis client options that
// docs/redis.md recommends: short timeouts, so that a Redis that hangs
// frees its connections soon (the limiter's own 100 ms budget bounds every
// decision whatever they are).
func newStore(redisAddr string) (ratelimit.Store, string) {
	if redisAddr == "" {
		return memory.New(memory.WithMaxKeys(1_000_000)), "memory"
	}
	client := goredis.NewClient(&goredis.Options{
		Addr:                  redisAddr,
		DialTimeout:           200 * time.Millisecond,
		ReadTimeout:           100 * time.Millisecond,
		WriteTimeout:          100 * time.Millisecond,
		PoolTimeout:           100 * time.Millisecond,
		ContextTimeoutEnabled: true,
	})
	return redisstore.New(client), "Redis (" + redisAddr + ")"
}

// routes builds the example's handler: one limiter per route, sharing
// store, and a description of their limits.
func routes(store ratelimit.Store, opts ...ratelimit.Option) (http.Handler, string, error) {
	home, err := ratelimit.New(store, ratelimit.PerMinute(10), append(opts, ratelimit.WithName("home"))...)
	if err != nil {
		return nil, "", err
	}
	// 60 per minute per API key (else per address), and whatever keys it
	// invents, no address gets more than 120 per minute.
	api, err := ratelimit.New(store, ratelimit.PerMinute(60), append(opts,
		ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.FirstOf(ratelimit.KeyByHeader("X-API-Key"), ratelimit.KeyByIP())),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api-per-ip", Limit: ratelimit.PerMinute(120), Key: ratelimit.KeyByIP()}),
		ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithProblemJSON(),
	)...)
	if err != nil {
		return nil, "", err
	}
	export, err := ratelimit.New(store, ratelimit.PerMinute(20), append(opts,
		ratelimit.WithName("export"),
		ratelimit.WithCost(func(*http.Request) int { return 5 }),
	)...)
	if err != nil {
		return nil, "", err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /{$}", home.Handler(text("hello\n")))
	mux.Handle("GET /api/", api.Handler(text(`{"items":[]}`+"\n")))
	mux.Handle("GET /export", export.Handler(text("a,b,c\n")))
	mux.Handle("GET /healthz", text("ok\n")) // not limited
	limits := strings.Join([]string{
		"GET / " + home.String() + " per IP",
		"GET /api/ " + api.String() + " (per X-API-Key, else per IP; per IP)",
		"GET /export " + export.String() + " per IP, 5 a request",
	}, ", ")
	return mux, limits, nil
}

// routesFromFile serves the same routes, limited by the rules in path.
func routesFromFile(store ratelimit.Store, path string, opts ...ratelimit.Option) (http.Handler, string, error) {
	cfg, err := rules.Load(path)
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", text("hello\n"))
	mux.Handle("GET /api/", text(`{"items":[]}`+"\n"))
	mux.Handle("GET /export", text("a,b,c\n"))
	mux.Handle("GET /healthz", text("ok\n"))
	h, err := cfg.Handler(store, mux, opts...)
	if err != nil {
		return nil, "", err
	}
	var limits []string
	for _, r := range cfg.Rules {
		limits = append(limits, fmt.Sprintf("%s %s: %v", r.Match, r.Name, r.Limit))
	}
	return h, strings.Join(limits, ", "), nil
}

func text(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
}

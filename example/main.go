// Command example serves a few routes behind rate limits, to try the
// library with curl:
//
//	go run ./example                 # memory store, on :8080
//	go run ./example -redis localhost:6379
//	go run ./example -redis host1:7000,host2:7000,host3:7000   # a Cluster
//	go run ./example -redis 'redis://host:26379?master_name=mymaster'   # Sentinel
//	go run ./example -rules example/rules.yaml   # the limits from a YAML file;
//	                                             # kill -HUP reloads it
//	go run ./example -dry-run        # report, never refuse
//	go run ./example -outbound 10    # 10 calls to a stub API within 2 a second
//
//	for i in $(seq 12); do curl -si localhost:8080/ | head -n 1; done
//	curl -si -H 'X-API-Key: pro-acme' localhost:8080/api/items   # plan pro
//	curl -si -H 'X-API-Key: k1' localhost:8080/api/items         # plan free
//	for i in $(seq 6); do curl -s -d account=ann -d password=guess localhost:8080/login; done
//	curl -s -XPOST 'localhost:8080/admin/reset?account=ann'
//	curl -s localhost:8080/metrics | grep ratelimit_requests_total
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
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
	redisAddr := flag.String("redis", "", "Redis host:port, several (a Cluster) comma-separated, or a redis:// URL (master_name= for Sentinel); empty: the in-memory store")
	rulesFile := flag.String("rules", "", "a YAML rules file to take the limits from; empty: the built-in ones")
	dryRun := flag.Bool("dry-run", false, "decide and report every request, but refuse none")
	instances := flag.Int("instances", 1, "with -redis: app servers sharing Redis; while it fails, each enforces limit/instances locally")
	calls := flag.Int("outbound", 0, "make this many calls to a local stub API through a budget of 2 a second (shared through -redis), then exit")
	timezone := flag.String("timezone", "Europe/Berlin", "the IANA time zone whose midnight resets the daily quota of /api/")
	flag.Parse()
	zone, err := time.LoadLocation(*timezone)
	if err != nil {
		log.Fatalf("-timezone: %v", err)
	}

	store, storeName, err := newStore(*redisAddr)
	if err != nil {
		log.Fatal(err)
	}
	if *calls > 0 {
		if err := outbound(store, ratelimit.PerSecond(2).WithBurst(1), *calls, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	var fallback ratelimit.Store
	// API keys reach Redis only as a keyed hash, whose secret every server
	// sharing it must know: at least 16 random bytes, kept with your secrets.
	keySecret := []byte(os.Getenv("RATELIMIT_KEY_SECRET"))
	if *redisAddr != "" && len(keySecret) == 0 {
		keySecret = []byte(demoKeySecret)
		log.Printf("RATELIMIT_KEY_SECRET is not set: API keys reach Redis hashed under the example's own demo secret; set it, the same on every server, in production")
	}
	if len(keySecret) > 0 && len(keySecret) < ratelimit.MinKeySecretLen {
		log.Fatalf("RATELIMIT_KEY_SECRET holds %d bytes: want at least %d", len(keySecret), ratelimit.MinKeySecretLen)
	}
	if *redisAddr != "" {
		// While Redis fails, decide locally with a share of each limit.
		fallback = memory.New(memory.WithMaxKeys(1_000_000))
	}
	s, err := app(config{store: store, rulesFile: *rulesFile, dryRun: *dryRun, fallback: fallback, instances: *instances, keySecret: keySecret, zone: zone})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on %s with the %s store; limits: %s", *addr, storeName, s.limits)
	if s.rules != nil {
		go reloadOnHangUp(s.rules, *rulesFile)
	}
	srv := &http.Server{Addr: *addr, Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// demoKeySecret is the secret of the keyed hash of API keys when
// RATELIMIT_KEY_SECRET is not set: every instance of the example shares it,
// so that they share budgets; a real service keeps its own with its secrets.
const demoKeySecret = "ratelimit example: not a secret"

// config is what the example serves with.
type config struct {
	store     ratelimit.Store
	rulesFile string // empty: the built-in routes
	dryRun    bool
	fallback  ratelimit.Store // nil: none
	instances int
	keySecret []byte         // empty: none (the memory store makes its own)
	zone      *time.Location // of the daily quota; nil is UTC
}

// reloadOnHangUp reloads the rules from path on every SIGHUP, logging what
// changed; a bad file leaves the rules in force.
func reloadOnHangUp(h *rules.Handler, path string) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	for range hup {
		changes, err := h.ReloadFile(path)
		if err != nil {
			log.Printf("rules not reloaded, the ones in force stay: %v", err)
			continue
		}
		log.Printf("rules reloaded from %s: %s; limits: %s", path, changes, h)
	}
}

// served is what the example serves.
type served struct {
	handler http.Handler   // the limited routes, and /metrics
	limits  string         // a description of the limits
	rules   *rules.Handler // with -rules: the handler to reload
}

// app returns the example's handler: the limited routes, and /metrics
// (not limited), with a description of the limits it enforces.
func app(c config) (*served, error) {
	reg := prometheus.NewRegistry()
	metrics, err := ratelimitprom.New(reg)
	if err != nil {
		return nil, err
	}
	opts := []ratelimit.Option{ratelimit.WithObserver(metrics.Observer())}
	if len(c.keySecret) > 0 {
		opts = append(opts, ratelimit.WithKeySecret(c.keySecret))
	}
	if c.dryRun {
		opts = append(opts, ratelimit.WithDryRun())
	}
	// The in-flight limit of /report takes these; a fallback store is the
	// rate limits' alone (a count of running requests has no local share).
	inflight := slices.Clip(opts)
	if c.fallback != nil {
		opts = append(opts, ratelimit.WithFallback(c.fallback, max(c.instances, 1)))
	}
	s := &served{}
	var handler http.Handler
	if c.rulesFile == "" {
		handler, s.limits, err = routes(c.store, c.zone, inflight, opts...)
	} else {
		s.rules, err = routesFromFile(c.store, c.rulesFile, opts...)
		if err == nil {
			handler, s.limits = withPlan(s.rules), s.rules.String() // the plans read the context
		}
	}
	if err != nil {
		return nil, err
	}
	root := http.NewServeMux()
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	root.Handle("/", handler)
	s.handler = root
	return s, nil
}

// newStore returns the store: memory, or Redis as the -redis flag names it
// (see redisOptions).
func newStore(redisFlag string) (ratelimit.Store, string, error) {
	if redisFlag == "" {
		return memory.New(memory.WithMaxKeys(1_000_000)), "memory", nil
	}
	o, err := redisOptions(redisFlag)
	if err != nil {
		return nil, "", err
	}
	return redisstore.New(goredis.NewUniversalClient(o)), describeRedis(o), nil
}

// routes builds the example's handler: one limiter per route, sharing
// store, and a description of their limits. The limiters take opts, the
// in-flight limit of /report inflight.
func routes(store ratelimit.Store, zone *time.Location, inflight []ratelimit.Option, opts ...ratelimit.Option) (http.Handler, string, error) {
	home, err := ratelimit.New(store, ratelimit.PerMinute(10), append(opts, ratelimit.WithName("home"))...)
	if err != nil {
		return nil, "", err
	}
	api, err := newAPI(store, zone, opts...) // products.go: plans and a daily quota
	if err != nil {
		return nil, "", err
	}
	login, err := newLogin(store, opts...) // failed attempts only
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
	report, err := reportRoute(store, 2*time.Second, inflight...)
	if err != nil {
		return nil, "", err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /report", report)
	mux.Handle("GET /{$}", home.Handler(text("hello\n")))
	mux.Handle("GET /api/", withPlan(api.Handler(text(`{"items":[]}`+"\n"))))
	mux.Handle("POST /login", limitBody(4096, login.Handler(loginHandler)))
	mux.Handle("POST /admin/reset", resetHandler(api, login))
	mux.Handle("GET /export", export.Handler(text("a,b,c\n")))
	mux.Handle("GET /healthz", text("ok\n")) // not limited
	limits := strings.Join([]string{
		"GET / " + home.String() + " per IP",
		"GET /api/ " + api.String() + " (per IP; per X-API-Key, else per IP, by plan)",
		"POST /login " + login.String() + " failed attempts per account, then blocked 15m",
		"GET /export " + export.String() + " per IP, 5 a request",
		"GET /report 2 at once per IP",
	}, ", ")
	return mux, limits, nil
}

// routesFromFile serves the same routes, limited by the rules in path,
// which the returned handler can reload.
func routesFromFile(store ratelimit.Store, path string, opts ...ratelimit.Option) (*rules.Handler, error) {
	cfg, err := rules.Load(path)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", text("hello\n"))
	mux.Handle("GET /api/", text(`{"items":[]}`+"\n"))
	mux.Handle("GET /export", text("a,b,c\n"))
	mux.Handle("GET /healthz", text("ok\n"))
	mux.Handle("POST /login", limitBody(4096, loginHandler))
	return rules.NewHandler(cfg, store, mux, rules.WithLimiterOptions(opts...))
}

func text(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
}

// Command example serves a few routes behind rate limits, to try the
// library with curl:
//
//	go run ./example                 # memory store, on 127.0.0.1:8080
//	go run ./example -redis localhost:6379
//	go run ./example -redis host1:7000,host2:7000,host3:7000   # a Cluster
//	go run ./example -redis 'redis://host:26379?master_name=mymaster'   # Sentinel
//	go run ./example -rules example/rules.yaml   # the limits from a YAML file;
//	                                             # kill -HUP reloads it
//	go run ./example -dry-run        # report, never refuse
//	go run ./example -outbound 10    # 10 calls to a stub API within 2 a second
//	go run ./example -addr :8080 -trusted-proxies 10.0.0.0/8   # behind a proxy
//	RATELIMIT_ADMIN_TOKEN=$(openssl rand -hex 16) go run ./example   # turns /admin/reset on
//
//	for i in $(seq 12); do curl -si localhost:8080/ | head -n 1; done
//	curl -si -H 'X-API-Key: pro-acme' localhost:8080/api/items   # plan pro
//	curl -si -H 'X-API-Key: k1' localhost:8080/api/items         # plan free
//	for i in $(seq 6); do curl -s -d account=ann -d password=guess localhost:8080/login; done
//	curl -s -XPOST -H "Authorization: Bearer $RATELIMIT_ADMIN_TOKEN" 'localhost:8080/admin/reset?account=ann&address=127.0.0.1'
//	curl -s localhost:8080/metrics | grep ratelimit_requests_total
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/inflight"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve on (loopback by default; :8080 for every interface)")
	redisAddr := flag.String("redis", "", "Redis host:port, several (a Cluster) comma-separated, or a redis:// URL (master_name= for Sentinel); empty: the in-memory store")
	rulesFile := flag.String("rules", "", "a YAML rules file to take the limits from; empty: the built-in ones")
	dryRun := flag.Bool("dry-run", false, "decide and report every request, but refuse none")
	instances := flag.Int("instances", 1, "with -redis: app servers sharing Redis; while it fails, each enforces limit/instances locally")
	calls := flag.Int("outbound", 0, "make this many calls to a local stub API through a budget of 2 a second (shared through -redis), then exit")
	timezone := flag.String("timezone", "Europe/Berlin", "the IANA time zone whose midnight resets the daily quota of /api/")
	proxies := flag.String("trusted-proxies", "", "comma-separated addresses or prefixes (10.0.0.0/8,::1) of the proxies whose X-Forwarded-For every route believes; empty: none, the connection's address is the client's")
	flag.Parse()
	zone, err := time.LoadLocation(*timezone)
	if err != nil {
		log.Fatalf("-timezone: %v", err)
	}
	trusted, err := parseProxies(*proxies)
	if err != nil {
		log.Fatal(err)
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
	// The admin routes answer only requests that carry this token.
	adminToken := os.Getenv("RATELIMIT_ADMIN_TOKEN")
	if adminToken == "" {
		log.Printf("RATELIMIT_ADMIN_TOKEN is not set: /admin/reset refuses every request")
	} else if len(adminToken) < minAdminToken {
		log.Fatalf("RATELIMIT_ADMIN_TOKEN holds %d bytes: want at least %d", len(adminToken), minAdminToken)
	}
	s, err := app(config{store: store, rulesFile: *rulesFile, dryRun: *dryRun, instances: *instances,
		keySecret: keySecret, zone: zone, trusted: trusted, adminToken: adminToken})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on %s with the %s store; limits: %s", ln.Addr(), storeName, s.limits)
	if s.rules != nil {
		go reloadOnHangUp(s.rules, *rulesFile, trusted)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.Serve(ln))
}

// demoKeySecret is the secret of the keyed hash of API keys when
// RATELIMIT_KEY_SECRET is not set: every instance of the example shares it,
// so that they share budgets; a real service keeps its own with its secrets.
const demoKeySecret = "ratelimit example: not a secret"

// config is what the example serves with.
type config struct {
	store      ratelimit.Store
	rulesFile  string // empty: the built-in routes
	dryRun     bool
	instances  int
	inflight   []inflight.Option // the options of /report's in-flight limit (app)
	keySecret  []byte            // empty: none (the memory store makes its own)
	zone       *time.Location    // of the daily quota; nil is UTC
	trusted    []netip.Prefix    // the proxies whose X-Forwarded-For is believed
	adminToken string            // empty: the admin routes are off
}

// ipKey keys requests by client address, believing the trusted proxies.
func (c config) ipKey() ratelimit.KeyFunc {
	if len(c.trusted) == 0 {
		return ratelimit.KeyByIP()
	}
	return ratelimit.KeyByIP(clientip.TrustProxies(c.trusted...))
}

// parseProxies reads the -trusted-proxies flag: addresses and prefixes,
// comma-separated.
func parseProxies(flag string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(flag, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("-trusted-proxies: %q is no address or prefix", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// served is what the example serves.
type served struct {
	handler http.Handler   // the limited routes, /metrics and /admin/reset
	limits  string         // a description of the limits
	rules   *rules.Handler // with -rules: the handler to reload
	reset   resetter       // what /admin/reset resets
}

// app returns the example's handler: the limited routes, /metrics (not
// limited) and /admin/reset (behind the admin token), with a description
// of the limits it enforces.
func app(c config) (*served, error) {
	reg := prometheus.NewRegistry()
	metrics, err := ratelimitprom.New(reg)
	if err != nil {
		return nil, err
	}
	opts := []ratelimit.Option{ratelimit.WithObserver(metrics.Observer())}
	// The in-flight limit of /report takes the same, as its own options;
	// while Redis fails, each rate limit decides locally with its share (a
	// count of running requests has none).
	c.inflight = []inflight.Option{inflight.WithObserver(metrics.Observer())}
	if len(c.keySecret) > 0 {
		opts = append(opts, ratelimit.WithKeySecret(c.keySecret))
		c.inflight = append(c.inflight, inflight.WithKeySecret(c.keySecret))
	}
	if c.dryRun {
		opts = append(opts, ratelimit.WithDryRun())
		c.inflight = append(c.inflight, inflight.WithDryRun())
	}
	if l, ok := c.store.(ratelimit.Local); c.instances > 1 && !(ok && l.Local()) {
		opts = append(opts, ratelimit.WithInstances(c.instances))
	}
	var s *served
	if c.rulesFile == "" {
		s, err = routes(c, opts...)
	} else {
		s, err = routesFromFile(c, opts...)
	}
	if err != nil {
		return nil, err
	}
	root := http.NewServeMux()
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	root.Handle("POST /admin/reset", adminOnly(c.adminToken, s.reset.handler()))
	root.Handle("/", s.handler)
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
	quietRedisLog()
	client := goredis.NewUniversalClient(o)
	warmRedis(client)
	return redisstore.New(client), describeRedis(o), nil
}

// routes serves the example's built-in routes: one limiter per route,
// sharing c's store, each keying addresses through c's trusted proxies.
func routes(c config, opts ...ratelimit.Option) (*served, error) {
	ip := c.ipKey()
	home, err := ratelimit.New(c.store, ratelimit.PerMinute(10), append(opts, ratelimit.WithName("home"), ratelimit.WithKeyFunc(ip))...)
	if err != nil {
		return nil, err
	}
	api, err := newAPI(c.store, c.zone, ip, opts...) // products.go: plans and a daily quota
	if err != nil {
		return nil, err
	}
	login, err := newLogins(c.store, ip, opts...) // login.go: failed attempts only
	if err != nil {
		return nil, err
	}
	export, err := ratelimit.New(c.store, ratelimit.PerMinute(20), append(opts,
		ratelimit.WithName("export"),
		ratelimit.WithKeyFunc(ip),
		ratelimit.WithCost(func(*http.Request) int { return 5 }),
	)...)
	if err != nil {
		return nil, err
	}
	report, err := reportRoute(c.store, 2*time.Second, append(c.inflight, inflight.WithKeyFunc(ip))...)
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /report", report)
	mux.Handle("GET /{$}", home.Handler(text("hello\n")))
	mux.Handle("GET /api/", withPlan(api.Handler(text(`{"items":[]}`+"\n"))))
	mux.Handle("POST /login", limitBody(4096, login.handler(loginHandler)))
	mux.Handle("GET /export", export.Handler(text("a,b,c\n")))
	mux.Handle("GET /healthz", text("ok\n")) // not limited
	limits := strings.Join([]string{
		"GET / " + home.String() + " per IP",
		"GET /api/ " + api.String() + " (per IP; per X-API-Key, else per IP, by plan)",
		"POST /login " + login.String(),
		"GET /export " + export.String() + " per IP, 5 a request",
		"GET /report 2 at once per IP",
	}, ", ")
	reset := resetter{
		api: func() *ratelimit.Limiter { return api },
		login: []loginLimit{
			{limiter: func() *ratelimit.Limiter { return login.pair }, byAddress: true, key: pairKey("account:")},
			{limiter: func() *ratelimit.Limiter { return login.account }, key: func(a, _ string) (string, error) { return "account:" + a, nil }},
		},
	}
	return &served{handler: mux, limits: limits, reset: reset}, nil
}

func text(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
}

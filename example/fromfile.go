package main

import (
	"errors"
	"log"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/rules"
)

// The example's limits from a rules file (-rules), reloaded on SIGHUP.

// reloadOnHangUp reloads the rules from path on every SIGHUP, logging what
// changed; a bad file leaves the rules in force.
func reloadOnHangUp(h *rules.Handler, path string, trusted []netip.Prefix) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	for range hup {
		cfg, err := loadRules(path, trusted)
		var changes rules.Changes
		if err == nil {
			changes, err = h.Apply(cfg)
		}
		if err != nil {
			log.Printf("rules not reloaded, the ones in force stay: %v", err)
			continue
		}
		log.Printf("rules reloaded from %s: %s; limits: %s", path, changes, h)
	}
}

// loadRules loads the rules file at path, its trusted proxies and those of
// the flag together.
func loadRules(path string, trusted []netip.Prefix) (*rules.Config, error) {
	cfg, err := rules.Load(path)
	if err != nil {
		return nil, err
	}
	cfg.TrustedProxies = append(cfg.TrustedProxies, trusted...)
	return cfg, nil
}

// routesFromFile serves the same routes, limited by the rules in c's file,
// which the returned handler can reload; /report keeps its in-flight limit,
// which is no rule.
func routesFromFile(c config, opts ...ratelimit.Option) (*served, error) {
	cfg, err := loadRules(c.rulesFile, c.trusted)
	if err != nil {
		return nil, err
	}
	ip := ratelimit.KeyByIP(clientip.TrustProxies(cfg.TrustedProxies...))
	report, err := reportRoute(c.store, 2*time.Second, append(c.inflight, inflight.WithKeyFunc(ip))...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", text("hello\n"))
	mux.Handle("GET /api/", text(`{"items":[]}`+"\n"))
	mux.Handle("GET /export", text("a,b,c\n"))
	mux.Handle("GET /healthz", text("ok\n"))
	mux.Handle("POST /login", loginHandler)
	mux.Handle("GET /report", report)
	h, err := rules.NewHandler(cfg, c.store, mux, rules.WithLimiterOptions(opts...), rules.WithUser(accountOf))
	if err != nil {
		return nil, err
	}
	reset := resetter{
		api: func() *ratelimit.Limiter { return h.Limiter("api") },
		login: []loginLimit{
			{limiter: func() *ratelimit.Limiter { return h.Limiter("login") }, byAddress: true, key: pairKey("user:")},
		},
	}
	// The plans read the context; the login's account, a form of at most 4 KiB.
	return &served{handler: withPlan(limitLogin(h)), limits: h.String(), rules: h, reset: reset}, nil
}

// accountOf is the account of a login, the user of the rules' key user.
func accountOf(r *http.Request) (string, bool) {
	a := r.FormValue("account")
	return a, a != ""
}

// limitLogin bounds the body of POST /login to 4 KiB and reads its form,
// before the rules' key reads the account from it.
func limitLogin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" && r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 4096)
			// as FormValue reads it in the built-in routes: a URL-encoded
			// or a multipart form
			if err := r.ParseMultipartForm(4096); err != nil && !errors.Is(err, http.ErrNotMultipart) {
				http.Error(w, "bad form", http.StatusBadRequest)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

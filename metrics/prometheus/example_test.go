package ratelimitprom_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimit-go/ratelimit"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// Serve requests through a limiter with metrics, then read them as
// Prometheus would, from the registry's /metrics handler.
func ExampleNew() {
	reg := prometheus.NewRegistry()
	m, err := ratelimitprom.New(reg)
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	api, err := ratelimit.New(store, ratelimit.PerMinute(2),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
	if err != nil {
		panic(err)
	}
	h := api.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}

	// In a server: http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})).
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(w.Body.String()) {
		if strings.HasPrefix(line, "ratelimit_requests_total") || strings.HasPrefix(line, "ratelimit_store_duration_seconds_count") {
			fmt.Print(line)
		}
	}
	// Output:
	// ratelimit_requests_total{limiter="api",policy="api",result="allowed"} 2
	// ratelimit_requests_total{limiter="api",policy="api",result="denied"} 1
	// ratelimit_requests_total{limiter="api",policy="api",result="dry_run_denied"} 0
	// ratelimit_requests_total{limiter="api",policy="api",result="error"} 0
	// ratelimit_store_duration_seconds_count{limiter="api"} 3
}

// Give each limiter its own Observer of one Metrics. Here a new limit runs
// in dry-run mode beside the enforced one: its would-be denials show as
// dry_run_denied while every request is served.
func ExampleMetrics_Observer() {
	reg := prometheus.NewRegistry()
	m, err := ratelimitprom.New(reg)
	if err != nil {
		panic(err)
	}
	store := memory.New()
	defer store.Close()
	enforced, err := ratelimit.New(store, ratelimit.PerMinute(100),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
	if err != nil {
		panic(err)
	}
	trial, err := ratelimit.New(store, ratelimit.PerMinute(3),
		ratelimit.WithName("api-strict"), ratelimit.WithDryRun(), ratelimit.WithObserver(m.Observer()))
	if err != nil {
		panic(err)
	}
	h := enforced.Handler(trial.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	served := 0
	for range 5 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code == http.StatusOK {
			served++
		}
	}
	fmt.Println("served:", served)
	printCounters(reg, "ratelimit_requests_total", "result", "allowed", "dry_run_denied")
	// Output:
	// served: 5
	// api allowed 5
	// api dry_run_denied 0
	// api-strict allowed 3
	// api-strict dry_run_denied 2
}

// printCounters prints the counters of family name whose label has one
// of values, as "limiter value count".
func printCounters(reg prometheus.Gatherer, name, label string, values ...string) {
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var limiter, value string
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "limiter":
					limiter = lp.GetValue()
				case label:
					value = lp.GetValue()
				}
			}
			for _, v := range values {
				if v == value {
					fmt.Println(limiter, value, m.GetCounter().GetValue())
				}
			}
		}
	}
}

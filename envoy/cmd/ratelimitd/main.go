// Command ratelimitd is a rate-limit service for Envoy, Istio and Envoy
// Gateway (RateLimitService v3) on the ratelimit library's engine. It reads
// envoyproxy/ratelimit's descriptor files and environment, so that a
// deployment can swap that service's image for this one; see the README
// beside it for where the two differ.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/envoy/rls"
	rlprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	s, err := loadSettings(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// addrs are the addresses ratelimitd listens on.
type addrs struct{ http, grpc, debug string }

// reloadInterval is how often the runtime files are checked for a change.
const reloadInterval = time.Second

// missingDir is nil if dir is a directory, else why it is not one.
func missingDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// run serves until ctx is done; ready, if set, is told the addresses once
// every listener is open.
func run(ctx context.Context, s settings, ready func(addrs)) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(s.logLevel)}))
	store, closeStore, ping, err := newStore(s)
	if err != nil {
		return err
	}
	defer closeStore()
	if ping != nil {
		// Served all the same (the time budget and the local fallback
		// decide while Redis does not answer), but never silently.
		go func() {
			if err := redisProblem(ctx, ping, s); err != nil && ctx.Err() == nil {
				logger.Error("ratelimitd: Redis did not answer at startup; the local fallback decides until it does", "redis_url", s.redisURL, "err", err)
			}
		}()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := rlprom.New(reg)
	if err != nil {
		return err
	}
	opts := []ratelimit.Option{
		ratelimit.WithName("ratelimitd"),
		ratelimit.WithPlainKeys(), // descriptor values, as the reference keeps them
		ratelimit.WithObserver(metrics.Observer()),
		ratelimit.WithLogger(logger),
	}
	if s.redisTimeout > 0 {
		opts = append(opts, ratelimit.WithTimeout(s.redisTimeout))
	}
	if !s.localCache {
		opts = append(opts, ratelimit.WithDenyCache(0)) // the reference's local cache is off by default
	}
	limiter, err := ratelimit.New(store, ratelimit.PerSecond(1), opts...)
	if err != nil {
		return err
	}
	svc := rls.NewService(limiter, nil, s.opts)
	var hc rls.Health
	grpcHealth := health.NewServer()
	setHealth := func(cfg *rls.Config) {
		ok := cfg != nil && (!s.healthyWithAtLeastOneConfig || len(cfg.Domains()) > 0)
		hc.Set(ok)
		st := healthpb.HealthCheckResponse_SERVING
		if !ok {
			st = healthpb.HealthCheckResponse_NOT_SERVING
		}
		grpcHealth.SetServingStatus("", st)
	}
	reloader, err := rls.NewReloader(s.runtime, svc)
	if err != nil {
		logger.Error("ratelimitd: configuration refused", "err", err)
	} else if missing := missingDir(s.runtime.Dir()); missing != nil {
		// Served all the same (no rule: every request OK, as the
		// reference), but never silently.
		logger.Error("ratelimitd: no configuration: every request is answered OK until it appears", "err", missing)
	} else {
		logger.Info("ratelimitd: configuration loaded", "dir", s.runtime.Dir(), "domains", svc.Config().Domains())
	}
	setHealth(svc.Config())
	go reloader.Run(ctx, reloadInterval, func(cfg *rls.Config) {
		logger.Info("ratelimitd: configuration reloaded", "domains", cfg.Domains())
		setHealth(cfg)
	}, func(err error) { logger.Error("ratelimitd: configuration refused, the old rules kept", "err", err) })

	listen := func(host string, port int) (net.Listener, error) {
		return net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	gl, err := listen(s.grpcHost, s.grpcPort)
	if err != nil {
		return err
	}
	hl, err := listen(s.host, s.port)
	if err != nil {
		gl.Close()
		return err
	}
	dl, err := listen(s.debugHost, s.debugPort)
	if err != nil {
		gl.Close()
		hl.Close()
		return err
	}
	gs := grpc.NewServer()
	pb.RegisterRateLimitServiceServer(gs, svc)
	healthpb.RegisterHealthServer(gs, grpcHealth)
	mux := http.NewServeMux()
	mux.Handle("POST /json", rls.JSONHandler(svc))
	mux.Handle("/healthcheck", &hc)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	debug := http.NewServeMux()
	debug.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ds := &http.Server{Handler: debug, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 3)
	go func() { errc <- gs.Serve(gl) }()
	go func() { errc <- hs.Serve(hl) }()
	go func() { errc <- ds.Serve(dl) }()
	if ready != nil {
		ready(addrs{http: hl.Addr().String(), grpc: gl.Addr().String(), debug: dl.Addr().String()})
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	ds.Shutdown(sctx)
	gs.GracefulStop()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// logLevel is LOG_LEVEL's slog level: DEBUG, INFO, WARN (the default) or ERROR.
func logLevel(s string) slog.Level {
	switch s {
	case "DEBUG", "TRACE":
		return slog.LevelDebug
	case "INFO":
		return slog.LevelInfo
	case "ERROR", "FATAL", "PANIC":
		return slog.LevelError
	}
	return slog.LevelWarn
}

package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func TestLoadSettings(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		check   func(settings) bool
		wantErr string
	}{
		{"the reference's defaults", nil, func(s settings) bool {
			return s.port == 8080 && s.grpcPort == 8081 && s.debugPort == 6070 && s.redisURL == "" &&
				s.runtime.WatchRoot && s.runtime.AppDirectory == "config" && !s.opts.StopIncrementWhenOverLimit
		}, ""},
		{"a cluster by REDIS_TYPE alone", map[string]string{"REDIS_TYPE": "cluster", "REDIS_URL": "a:1,b:2"}, func(s settings) bool {
			return s.redisType == "CLUSTER"
		}, ""},
		{"the runtime and the modes", map[string]string{"RUNTIME_ROOT": "/r", "RUNTIME_SUBDIRECTORY": "sub", "RUNTIME_WATCH_ROOT": "false",
			"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT": "true", "LIMIT_RESPONSE_HEADERS_ENABLED": "true"}, func(s settings) bool {
			return s.runtime.Dir() == "/r/sub/config" && !s.runtime.WatchRoot && s.opts.StopIncrementWhenOverLimit && s.opts.Headers
		}, ""},
		{"REDIS_TIMEOUT, the time budget", map[string]string{"REDIS_TIMEOUT": "10s"}, func(s settings) bool {
			return s.redisTimeout == 10*time.Second
		}, ""},
		{"a REDIS_TIMEOUT that is no duration", map[string]string{"REDIS_TIMEOUT": "10"}, nil, "REDIS_TIMEOUT"},
		{"a port that is no number", map[string]string{"GRPC_PORT": "x"}, nil, "GRPC_PORT"},
		{"an unknown REDIS_TYPE", map[string]string{"REDIS_TYPE": "ring"}, nil, "REDIS_TYPE"},
		{"a flag that is no boolean", map[string]string{"SHADOW_MODE": "maybe"}, nil, "SHADOW_MODE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := loadSettings(func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("%v, want an error naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil || !c.check(s) {
				t.Errorf("%+v, %v", s, err)
			}
		})
	}
}

// The command serves gRPC, /json, /healthcheck and /metrics from a
// runtime directory, on the memory store and on Redis (a real one when
// RATELIMIT_REDIS_ADDR is set, miniredis otherwise).
func TestRun(t *testing.T) {
	redisAddr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if redisAddr == "" {
		mr := miniredis.RunT(t)
		redisAddr = mr.Addr()
	}
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "config"), 0o755)
			os.WriteFile(filepath.Join(root, "config", "r.yaml"), []byte("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n"), 0o644)
			env := map[string]string{"RUNTIME_ROOT": root, "RUNTIME_WATCH_ROOT": "false", "PORT": "0", "GRPC_PORT": "0", "DEBUG_PORT": "0",
				"HOST": "127.0.0.1", "GRPC_HOST": "127.0.0.1", "DEBUG_HOST": "127.0.0.1", "CACHE_KEY_PREFIX": t.Name() + ":"}
			if backend == "redis" {
				env["REDIS_URL"], env["REDIS_SOCKET_TYPE"] = redisAddr, "tcp"
			}
			s, err := loadSettings(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan addrs, 1)
			done := make(chan error, 1)
			go func() { done <- run(ctx, s, func(a addrs) { ready <- a }) }()
			var a addrs
			select {
			case a = <-ready:
			case err := <-done:
				t.Fatal(err)
			}
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			conn, err := grpc.NewClient(a.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			client := pb.NewRateLimitServiceClient(conn)
			req := &pb.RateLimitRequest{Domain: "d", Descriptors: []*rlv3.RateLimitDescriptor{{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "k", Value: backend}}}}}
			for i, want := range []pb.RateLimitResponse_Code{pb.RateLimitResponse_OK, pb.RateLimitResponse_OVER_LIMIT} {
				resp, err := client.ShouldRateLimit(context.Background(), req)
				if err != nil || resp.OverallCode != want {
					t.Fatalf("call %d: %v, %v; want %v", i, resp, err, want)
				}
			}
			body := `{"domain":"d","descriptors":[{"entries":[{"key":"k","value":"` + backend + `"}]}]}`
			if code, _ := get(t, "POST", "http://"+a.http+"/json", body); code != http.StatusTooManyRequests {
				t.Errorf("/json: %d, want 429", code)
			}
			if code, out := get(t, "GET", "http://"+a.http+"/healthcheck", ""); code != http.StatusOK || out != "OK" {
				t.Errorf("/healthcheck: %d %s", code, out)
			}
			if code, out := get(t, "GET", "http://"+a.debug+"/metrics", ""); code != http.StatusOK || !strings.Contains(out, "ratelimitd") {
				t.Errorf("/metrics: %d, without the limiter's series", code)
			}
		})
	}
}

func get(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

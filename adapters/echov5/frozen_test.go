package echolimit_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	echolimit "github.com/ratelimit-go/ratelimit/adapters/echov5"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestBridgeOverAFrozenRedisCostsTheBudget: with redis-server frozen
// (SIGSTOP), a request through Echo's RateLimiter and the bridge costs
// about the limiter's time budget, not go-redis's own timeouts (seconds),
// and the breaker then spares the next requests even that.
func TestBridgeOverAFrozenRedisCostsTheBudget(t *testing.T) {
	addr, stop := startRedis(t)
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	defer client.Close()
	l, err := ratelimit.New(redisstore.New(client), ratelimit.PerMinute(100), ratelimit.WithName("echo"), ratelimit.WithPlainKeys(),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{Store: echolimit.NewRateLimiterStore(l)}))
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusOK, "ok") })
	serve := func() (int, time.Duration) {
		start := time.Now()
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w.Code, time.Since(start)
	}
	if code, _ := serve(); code != http.StatusOK {
		t.Fatalf("status %d with Redis up, want 200", code)
	}
	stop()
	for i := range 10 {
		code, took := serve()
		if code != http.StatusOK {
			t.Fatalf("request %d: status %d with Redis frozen, want 200 (fail open)", i, code)
		}
		if took > time.Second {
			t.Fatalf("request %d took %v with Redis frozen, want about the 100ms budget", i, took)
		}
	}
	if s := l.Breaker().State(); s != ratelimit.BreakerOpen {
		t.Errorf("breaker %v after 10 requests to a frozen Redis, want open", s)
	}
}

// startRedis starts a redis-server of the test's own on a free loopback
// port and returns its address and a function that freezes it (SIGSTOP).
// It is continued and killed, by PID, when the test ends. Without
// redis-server on PATH the test is skipped, or fails if
// RATELIMIT_REDIS_ADDR says a real Redis is expected.
func startRedis(t *testing.T) (string, func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RATELIMIT_REDIS_ADDR") != "" {
			t.Fatalf("RATELIMIT_REDIS_ADDR is set but redis-server is not on PATH: %v", err)
		}
		t.Skip("redis-server is not on PATH (set RATELIMIT_REDIS_ADDR to make this a failure)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer PING after 5s: %v", addr, err)
		}
	}
	return addr, func() {
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP to redis-server (pid %d): %v", cmd.Process.Pid, err)
		}
	}
}

package ratelimit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// syncBuffer is a bytes.Buffer that several goroutines may write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWithLoggerTakesEveryLine: a limiter's failed decisions, its dry
// run's would-deny lines and its breaker's changes of state go to the
// logger WithLogger gives, and none to slog's default.
func TestWithLoggerTakesEveryLine(t *testing.T) {
	var def syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(prev)

	var own syncBuffer
	logger := slog.New(slog.NewTextHandler(&own, nil))
	failing, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(10), ratelimit.WithName("failing"),
		ratelimit.WithLogger(logger), ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	failing.Allow(context.Background(), "ip:192.0.2.1")
	mem := memory.New()
	defer mem.Close()
	dry, err := ratelimit.New(mem, ratelimit.PerMinute(1), ratelimit.WithName("dry"),
		ratelimit.WithLogger(logger), ratelimit.WithDryRun())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		dry.Allow(context.Background(), "k")
	}
	for _, want := range []string{"request not decided by the store", "breaker open", "dry run: would deny"} {
		if !strings.Contains(own.String(), want) {
			t.Errorf("the limiter's logger has no line %q:\n%s", want, own.String())
		}
	}
	if def.String() != "" {
		t.Errorf("slog's default logger got lines of limiters with a logger of their own:\n%s", def.String())
	}
	if _, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), ratelimit.WithLogger(nil)); err == nil {
		t.Error("WithLogger(nil) is no error")
	}
}

// A limiter's lines go to the application's own logger.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output for this example
			}
			return a
		},
	}))
	limiter, _ := ratelimit.New(failingStore{}, ratelimit.PerMinute(10), ratelimit.WithName("api"),
		ratelimit.WithLogger(logger))
	res, err := limiter.Allow(context.Background(), "ip:192.0.2.1")
	fmt.Println(res.Allowed, err != nil)
	// Output:
	// level=ERROR msg="ratelimit: request not decided by the store" limiter=api err="store down" policy=fallback suppressed=0
	// true true
}

// TestABadCostIsLoggedAsRefused: a request whose cost the limiter cannot
// take (here, -1) is answered 500, and its log line says so, not which
// failure policy would have answered a store that failed.
func TestABadCostIsLoggedAsRefused(t *testing.T) {
	var own syncBuffer
	mem := memory.New()
	defer mem.Close()
	l, err := ratelimit.New(mem, ratelimit.PerMinute(10), ratelimit.WithName("cost"),
		ratelimit.WithLogger(slog.New(slog.NewTextHandler(&own, nil))),
		ratelimit.WithCost(func(*http.Request) int { return -1 }))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	l.Handler(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("a cost of -1: %d, want 500", rec.Code)
	}
	if line := own.String(); !strings.Contains(line, `policy="refused (500)"`) || strings.Contains(line, "fail open") {
		t.Fatalf("the log line of a bad cost: %s; want it refused, no failure policy", line)
	}
}

package redisstore_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// testLogger is a logger for a limiter's own lines (ratelimit.WithLogger)
// that writes them to t.Log while t runs, so that they show beside the
// test that caused them, and drops what comes after it ended.
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, nil))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

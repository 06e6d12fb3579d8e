package redisstore_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// syncBuffer is a bytes.Buffer safe for the log's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestARefusedConnectionReadsAsRefused: after kill -9 of redis-server, the
// limiter logs at most a line a second. With go-redis's default 5 dial
// attempts 100 ms apart, a refused dial outlasts the limiter's budget and
// reads as a timeout; with one attempt, as docs/redis.md recommends, the
// log says what happened: the connection was refused.
func TestARefusedConnectionReadsAsRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opts    goredis.Options
		refused bool // every line names the refusal
	}{
		{"go-redis defaults", goredis.Options{}, false},
		{"one dial attempt", goredis.Options{DialerRetries: 1, MaxRetries: -1}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startRedis(t)
			opts := tt.opts
			opts.Addr = p.Addr()
			client := goredis.NewClient(&opts)
			defer client.Close()
			var logs syncBuffer
			l, err := ratelimit.New(redisstore.New(client), ratelimit.PerMinute(100_000), ratelimit.WithName("refused"),
				ratelimit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			serve := func() int {
				w := httptest.NewRecorder()
				l.Admit(w, httptest.NewRequest(http.MethodGet, "/", nil))
				return w.Code
			}
			if code := serve(); code != http.StatusOK {
				t.Fatalf("status %d with Redis up, want 200", code)
			}
			p.Kill()
			start := time.Now()
			for time.Since(start) < 1600*time.Millisecond {
				serve()
				time.Sleep(5 * time.Millisecond)
			}
			// At most one line a second: 2 in 1.6 s, more if a busy machine
			// made the last calls late.
			most := 1 + int(time.Since(start)/time.Second)
			var lines []string
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "request not decided by the store") {
					lines = append(lines, line)
				}
			}
			if len(lines) < 1 || len(lines) > most {
				t.Fatalf("%d log lines in 1.6 s of failures, want 1 to %d (at most one a second):\n%s", len(lines), most, strings.Join(lines, "\n"))
			}
			for _, line := range lines {
				if tt.refused && !strings.Contains(line, "connection refused") {
					t.Errorf("a log line does not say the connection was refused: %s", line)
				}
			}
		})
	}
}

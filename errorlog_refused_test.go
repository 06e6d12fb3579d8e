package ratelimit_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

// dialStore is a store whose every decision dials addr, as a Redis client
// does, and fails with what the dial returns.
type dialStore struct{ addr string }

func (s dialStore) AllowN(ctx context.Context, _ string, _ ratelimit.Limit, _ int) (ratelimit.Result, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err == nil {
		c.Close()
		err = net.ErrClosed
	}
	return ratelimit.Result{}, err
}

// TestLogSaysRefused: a store whose connection is refused is logged as
// refused, not only inside the error's text; other failures are not.
func TestLogSaysRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close() // nothing listens there now: a dial is refused
	for _, tt := range []struct {
		name, addr string
		refused    bool
	}{
		{"a refused connection", refused, true},
		{"another failure", open, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
			l, err := ratelimit.New(dialStore{tt.addr}, ratelimit.PerMinute(10), ratelimit.WithName("refused"), ratelimit.WithTimeout(0))
			if err != nil {
				t.Fatal(err)
			}
			l.Admit(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			line := logs.String()
			if !strings.Contains(line, "request not decided by the store") {
				t.Fatalf("no log line of the failure:\n%s", line)
			}
			if got := strings.Contains(line, "refused the connection"); got != tt.refused {
				t.Errorf("the line says the store refused the connection: %v, want %v:\n%s", got, tt.refused, line)
			}
		})
	}
}

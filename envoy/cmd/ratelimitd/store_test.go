package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestRedisProblemNamesTheSocketType: a Redis that does not answer at
// startup is named in the log, with the likely cause when
// REDIS_SOCKET_TYPE was left at unix beside a host:port address; a Redis
// that answers is no problem.
func TestRedisProblemNamesTheSocketType(t *testing.T) {
	refused := errors.New("dial unix 127.0.0.1:6379: connect: no such file or directory")
	for _, tt := range []struct {
		name     string
		s        settings
		ping     error
		want     string // in the error; "" for none
		wantHint bool
	}{
		{"answers", settings{redisSocketType: "unix", redisType: "SINGLE", redisURL: "127.0.0.1:6379"}, nil, "", false},
		{"unix beside host:port", settings{redisSocketType: "unix", redisType: "SINGLE", redisURL: "127.0.0.1:6379"}, refused, "no such file", true},
		{"unix socket path", settings{redisSocketType: "unix", redisType: "SINGLE", redisURL: "/var/run/redis.sock"}, refused, "no such file", false},
		{"tcp", settings{redisSocketType: "tcp", redisType: "SINGLE", redisURL: "127.0.0.1:6379"}, refused, "no such file", false},
		{"cluster", settings{redisSocketType: "unix", redisType: "CLUSTER", redisURL: "127.0.0.1:7000"}, refused, "no such file", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := redisProblem(context.Background(), func(context.Context) error { return tt.ping }, tt.s)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, refused) {
				t.Fatalf("got %v, want an error wrapping %q", err, tt.want)
			}
			if hint := strings.Contains(err.Error(), "set REDIS_SOCKET_TYPE=tcp"); hint != tt.wantHint {
				t.Fatalf("hint %v in %q, want %v", hint, err, tt.wantHint)
			}
		})
	}
}

// TestMissingDirIsNamed: a runtime directory that does not exist, or is
// a file, is named for the start-up log; a directory is fine.
func TestMissingDirIsNamed(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		ok   bool
	}{{dir, true}, {dir + "/absent", false}, {file, false}} {
		if err := missingDir(tt.path); (err == nil) != tt.ok {
			t.Errorf("missingDir(%q) = %v, want ok %v", tt.path, err, tt.ok)
		}
	}
}

// TestRedisClientsKeepTheirDeadlines: every Redis client ratelimitd makes
// keeps its context deadlines on its sockets (ContextTimeoutEnabled), so
// that the library calls its store on the request's goroutine within the
// budget. Without it, a decision over several Cluster slots had its second
// call refused as not sent, and the fallback answered a healthy Cluster.
func TestRedisClientsKeepTheirDeadlines(t *testing.T) {
	for _, typ := range []string{"SINGLE", "CLUSTER", "SENTINEL"} {
		t.Run(typ, func(t *testing.T) {
			store, closeStore, _, err := newStore(settings{redisType: typ, redisSocketType: "tcp", redisURL: "127.0.0.1:1,127.0.0.1:2"})
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore()
			k, ok := store.(interface{ KeepsDeadlines() bool })
			if !ok || !k.KeepsDeadlines() {
				t.Fatalf("the %s store does not keep its deadlines", typ)
			}
		})
	}
}

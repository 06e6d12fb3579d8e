package rls

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

const (
	oneRule  = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	twoRules = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 2}\n"
)

// limitOf returns the requests_per_unit the service answers for k.
func limitOf(t *testing.T, s *Service) uint32 {
	t.Helper()
	resp, err := s.ShouldRateLimit(context.Background(), request("d", withHits(desc("k=v"), 0)))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Statuses[0].GetCurrentLimit().GetRequestsPerUnit()
}

func writeFile(t *testing.T, path, body string, mtime time.Time) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, mtime, mtime) // a change the fingerprint sees even within one clock tick
}

func TestReload(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name      string
		watchRoot bool
		// change changes the files; root is RUNTIME_ROOT.
		change func(t *testing.T, base, root string)
	}{
		{"a swapped RUNTIME_ROOT symlink with RUNTIME_WATCH_ROOT", true, func(t *testing.T, base, root string) {
			writeFile(t, filepath.Join(base, "v2", "config", "r.yaml"), twoRules, t0)
			tmp := filepath.Join(base, "next")
			if err := os.Symlink(filepath.Join(base, "v2"), tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, root); err != nil {
				t.Fatal(err)
			}
		}},
		{"a changed file without RUNTIME_WATCH_ROOT", false, func(t *testing.T, base, root string) {
			writeFile(t, filepath.Join(root, "config", "r.yaml"), twoRules, t0.Add(time.Second))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			writeFile(t, filepath.Join(base, "v1", "config", "r.yaml"), oneRule, t0)
			root := filepath.Join(base, "current")
			if err := os.Symlink(filepath.Join(base, "v1"), root); err != nil {
				t.Fatal(err)
			}
			s, _ := newTestService(t, "domain: other\n", Options{})
			r, err := NewReloader(Runtime{Root: root, WatchRoot: c.watchRoot}, s)
			if err != nil {
				t.Fatal(err)
			}
			if got := limitOf(t, s); got != 1 {
				t.Fatalf("first load: limit %d, want 1", got)
			}
			if loaded, err := r.Check(); loaded || err != nil {
				t.Fatalf("unchanged files reloaded: %v, %v", loaded, err)
			}
			c.change(t, base, root)
			if loaded, err := r.Check(); !loaded || err != nil {
				t.Fatalf("changed files not reloaded: %v, %v", loaded, err)
			}
			if got := limitOf(t, s); got != 2 {
				t.Errorf("after reload: limit %d, want 2", got)
			}
		})
	}
}

func TestReloadKeepsRulesOfABadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config", "r.yaml")
	writeFile(t, path, oneRule, time.Unix(1_700_000_000, 0))
	s, _ := newTestService(t, "domain: other\n", Options{})
	r, err := NewReloader(Runtime{Root: dir}, s)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: eon}\n", time.Unix(1_700_000_001, 0))
	loaded, err := r.Check()
	if loaded || err == nil || !strings.Contains(err.Error(), path+":4") {
		t.Fatalf("bad file: %v, %v; want refused, naming %s:4", loaded, err, path)
	}
	if got := limitOf(t, s); got != 1 {
		t.Errorf("after a refused file: limit %d, want the old rules' 1", got)
	}
}

func TestJSONHandler(t *testing.T) {
	s, _ := newTestService(t, oneRule, Options{})
	h := JSONHandler(s)
	cases := []struct {
		name, body string
		code       int
		has        string
	}{
		{"a request within its limit", `{"domain":"d","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}`, 200, `"overallCode":"OK"`},
		{"a request over its limit", `{"domain":"d","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}`, 429, `"overallCode":"OVER_LIMIT"`},
		{"a malformed body", `{"domain":`, 400, ""},
		{"an unknown field", `{"domian":"d"}`, 400, ""},
		{"no descriptors", `{"domain":"d"}`, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/json", strings.NewReader(c.body)))
			if w.Code != c.code || !strings.Contains(w.Body.String(), c.has) {
				t.Errorf("%d %s, want %d with %s", w.Code, w.Body, c.code, c.has)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	var h Health
	for _, c := range []struct {
		ok   bool
		code int
	}{{false, http.StatusInternalServerError}, {true, http.StatusOK}} {
		h.Set(c.ok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/healthcheck", nil))
		if w.Code != c.code {
			t.Errorf("healthy %v: %d, want %d", c.ok, w.Code, c.code)
		}
	}
}

// TestReloadOfNoFiles: an empty or missing directory is an empty Config,
// loaded at once whether or not the root is watched (with
// RUNTIME_WATCH_ROOT=false the fingerprint of no files once matched the
// Reloader's "nothing seen", the Config stayed nil and ratelimitd crashed
// at start-up); a file that appears later is loaded.
func TestReloadOfNoFiles(t *testing.T) {
	for _, watch := range []bool{false, true} {
		for _, dir := range []string{"empty", "missing"} {
			t.Run(fmt.Sprintf("%s, watch root %v", dir, watch), func(t *testing.T) {
				base := t.TempDir()
				root := filepath.Join(base, "current")
				if err := os.MkdirAll(filepath.Join(base, "v1"), 0o755); err != nil {
					t.Fatal(err)
				}
				if dir == "empty" {
					os.MkdirAll(filepath.Join(base, "v1", "config"), 0o755)
				}
				if err := os.Symlink(filepath.Join(base, "v1"), root); err != nil {
					t.Fatal(err)
				}
				s, _ := newTestService(t, "domain: other\n", Options{})
				s.SetConfig(nil) // as ratelimitd starts: no Config before the first load
				r, err := NewReloader(Runtime{Root: root, WatchRoot: watch}, s)
				if err != nil {
					t.Fatal(err)
				}
				if s.Config() == nil {
					t.Fatal("no Config after the first load")
				}
				resp, err := s.ShouldRateLimit(context.Background(), request("d", desc("k=v")))
				if err != nil || resp.OverallCode != pb.RateLimitResponse_OK {
					t.Fatalf("a request with no rules: %v, %v; want OK", resp.GetOverallCode(), err)
				}
				if watch {
					return // a file change is not what a watched root reloads on
				}
				writeFile(t, filepath.Join(root, "config", "r.yaml"), oneRule, time.Unix(1_700_000_000, 0))
				if loaded, err := r.Check(); !loaded || err != nil {
					t.Fatalf("a file that appeared: loaded %v, %v", loaded, err)
				}
				if got := limitOf(t, s); got != 1 {
					t.Errorf("after the file appeared: limit %d, want 1", got)
				}
			})
		}
	}
}

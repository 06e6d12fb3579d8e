package rules_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const before = `
rules:
  - {name: home, match: "GET /{$}", rate: 3, period: 1h}
  - {name: api, match: /api/, rate: 5, period: 1h}
  - {name: old, match: /old, rate: 5, period: 1h}
`

const after = `
rules:
  - {name: home, match: "GET /{$}", rate: 3, period: 1h}
  - {name: api, match: /api/, rate: 1, period: 1h}
  - {name: new, match: /new, rate: 5, period: 1h}
`

func newHandler(t *testing.T, store ratelimit.Store, file string) *rules.Handler {
	t.Helper()
	c, err := rules.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	h, err := rules.NewHandler(c, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestReloadKeepsBudgetsAndReportsChanges(t *testing.T) {
	store := memory.New()
	defer store.Close()
	h := newHandler(t, store, before)
	check(t, "home before", do(h, 2, "GET", "/", nil), 404, 404)
	home := h.Limiter("home")

	changes, err := h.Reload([]byte(after))
	if err != nil {
		t.Fatal(err)
	}
	if got := changes.String(); got != "added new; removed old; changed api" {
		t.Fatalf("changes: %q", got)
	}
	if h.Limiter("home") != home {
		t.Fatal("the unchanged rule got a new limiter")
	}
	check(t, "home keeps its budget: 1 of 3 left", do(h, 2, "GET", "/", nil), 404, 429)
	check(t, "api has its new limit", do(h, 2, "GET", "/api/", nil), 404, 429)
	check(t, "old is gone", do(h, 2, "GET", "/old", nil), 404, 404)
	check(t, "new is here", do(h, 1, "GET", "/new", nil), 404)

	changes, err = h.Reload([]byte(after))
	if err != nil || !changes.Empty() || changes.String() != "no changes" {
		t.Fatalf("the same file again: %v, %v", changes, err)
	}
}

func TestInvalidReloadKeepsTheRules(t *testing.T) {
	store := memory.New()
	defer store.Close()
	h := newHandler(t, store, before)
	check(t, "home", do(h, 1, "GET", "/", nil), 404)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	for _, bad := range []struct{ file, err string }{
		{strings.Replace(after, "rate: 1,", "rate: 0,", 1), path + `:4: rule "api": invalid limit: rate 0 must be positive`},
		{after + "  - {name: user, match: /u, key: user, rate: 1, period: 1h}\n", path + `:6: rule "user": key user: no user function`},
		{"rules: [", path + `:1: did not find expected node content`},
	} {
		if err := os.WriteFile(path, []byte(bad.file), 0o644); err != nil {
			t.Fatal(err)
		}
		changes, err := h.ReloadFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), bad.err) || !changes.Empty() {
			t.Fatalf("reload of a bad file: %v, %v; want an error starting %q", changes, err, bad.err)
		}
		if got := h.Config().Rules[2].Name; got != "old" {
			t.Fatalf("after a bad reload the rules in force end with %q", got)
		}
	}
	check(t, "home, as before", do(h, 3, "GET", "/", nil), 404, 404, 429)
	check(t, "old, as before", do(h, 1, "GET", "/old", nil), 404)
}

// remote hides the memory store's Local, so that limiters give it a deny
// cache as they would Redis, and counts its calls.
type remote struct {
	*memory.Store
	calls atomic.Int64
}

func (s *remote) Local() bool { return false }

func (s *remote) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	return s.Store.AllowN(ctx, key, l, n)
}

// TestReloadKeepsTheDenyCache: an unchanged rule keeps its limiter, so a
// key its store denied is still denied locally after a reload.
func TestReloadKeepsTheDenyCache(t *testing.T) {
	store := &remote{Store: memory.New()}
	defer store.Close()
	h := newHandler(t, store, before)
	check(t, "home", do(h, 4, "GET", "/", nil), 404, 404, 404, 429)
	calls := store.calls.Load()
	if _, err := h.Reload([]byte(after)); err != nil {
		t.Fatal(err)
	}
	check(t, "home after the reload", do(h, 3, "GET", "/", nil), 429, 429, 429)
	if n := store.calls.Load() - calls; n != 0 {
		t.Fatalf("the store was asked %d times about a key the deny cache holds", n)
	}
}

// TestReloadUnderLoad: requests keep being served, each by one whole rule
// set, while rules are reloaded over and over (run with -race): 60 times,
// or 200 with RATELIMIT_SLOW_TESTS.
func TestReloadUnderLoad(t *testing.T) {
	reloads := 60
	if os.Getenv("RATELIMIT_SLOW_TESTS") != "" {
		reloads = 200
	}
	store := memory.New()
	defer store.Close()
	h := newHandler(t, store, before)
	var (
		wg   sync.WaitGroup
		stop atomic.Bool
		bad  atomic.Value
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths := []string{"/", "/api/x", "/old", "/new", "/other"}
			for i := 0; !stop.Load(); i++ {
				path := paths[(g+i)%len(paths)]
				for _, code := range do(h, 1, "GET", path, map[string]string{"X-Forwarded-For": "ignored"}) {
					if code != 404 && code != 429 {
						bad.Store(fmt.Sprintf("%s: %d", path, code))
					}
				}
			}
		}()
	}
	for i := range reloads {
		file := []string{before, after, "rules: ["}[i%3]
		_, err := h.Reload([]byte(file))
		if (err != nil) != (i%3 == 2) {
			t.Errorf("reload %d: %v", i, err)
		}
		_ = h.String()
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	if got := h.Config().Rules[2].Name; got != "new" {
		t.Fatalf("rules in force end with %q, want the last good file's", got)
	}
}

package redisstore_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

func TestSlotsAcquireRenewRelease(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			ctx := context.Background()
			a, err := s.Acquire(ctx, "k", 2, time.Minute)
			if err != nil || !a.Acquired || a.Running != 1 {
				t.Fatalf("first Acquire = %+v, %v", a, err)
			}
			b, _ := s.Acquire(ctx, "k", 2, time.Minute)
			c, _ := s.Acquire(ctx, "k", 2, time.Minute)
			if !b.Acquired || c.Acquired || c.Running != 2 {
				t.Fatalf("second and third Acquire = %+v, %+v; want the third refused with 2 running", b, c)
			}
			if err := s.Renew(ctx, "k", a, time.Minute); err != nil {
				t.Fatal(err)
			}
			for range 2 { // twice: harmless
				if err := s.Release(ctx, "k", a); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Renew(ctx, "k", a, time.Minute); err != redisstore.ErrSlotLost {
				t.Fatalf("Renew of a released slot = %v, want ErrSlotLost", err)
			}
			if d, _ := s.Acquire(ctx, "k", 2, time.Minute); !d.Acquired || d.Running != 2 {
				t.Fatalf("Acquire after a release = %+v", d)
			}
		})
	}
}

const (
	childEnv = "RATELIMIT_INFLIGHT_CHILD_PREFIX"
	// Long enough that a renewal every third of it, each within a budget of
	// a second, keeps a slot on a busy machine under the race detector.
	childLease = 3 * time.Second
)

// newInFlight is the in-flight limit both instances run: 2 at once per
// key, leases of childLease.
func newInFlight(t *testing.T, addr, pfx string) *inflight.Limiter {
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	f, err := inflight.New(redisstore.New(c, redisstore.WithPrefix(pfx)), 2,
		inflight.WithName("export"), inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), inflight.WithLease(childLease),
		inflight.WithTimeout(time.Second), inflight.WithKeySecret([]byte("both instances' secret"))) // one secret: one slot store key
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func exportRequest() *http.Request {
	r := httptest.NewRequest("GET", "/export", nil)
	r.Header.Set("X-Key", "tenant-1")
	return r
}

// TestInFlightChild is the other instance of TestInFlightSurvivesKill9:
// it holds one slot, its handler never returning, until it is killed.
func TestInFlightChild(t *testing.T) {
	pfx := os.Getenv(childEnv)
	if pfx == "" {
		t.Skip("run by TestInFlightSurvivesKill9 as its second instance")
	}
	f := newInFlight(t, os.Getenv("RATELIMIT_REDIS_ADDR"), pfx)
	f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		os.Stdout.WriteString("held\n")
		select {} // an export that never ends: the process is killed
	})).ServeHTTP(httptest.NewRecorder(), exportRequest())
}

// TestInFlightSurvivesKill9: two instances share a limit of 2 exports at
// once; one holds a slot and is killed with SIGKILL, so it never releases
// it. While it lives, its lease is renewed (a third export is refused
// past two leases); once it is dead, its slot expires within the lease and
// the survivor runs a second export.
func TestInFlightSurvivesKill9(t *testing.T) {
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" {
		t.Skip("set RATELIMIT_REDIS_ADDR to run two instances against a real redis-server (.ci/run does)")
	}
	pfx := prefix(t)
	child := exec.Command(os.Args[0], "-test.run=^TestInFlightChild$", "-test.v")
	child.Env = append(os.Environ(), childEnv+"="+pfx)
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	held := make(chan bool)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "held") {
				held <- true
			}
		}
		close(held)
	}()
	select {
	case ok := <-held:
		if !ok {
			t.Fatal("the child exited without a slot")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the child took no slot within 10s")
	}

	f := newInFlight(t, addr, pfx)
	release := make(chan struct{})
	running := make(chan struct{})
	go f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		close(running)
		<-release
	})).ServeHTTP(httptest.NewRecorder(), exportRequest())
	<-running
	defer close(release)

	third := func() int {
		rec := httptest.NewRecorder()
		f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, exportRequest())
		return rec.Code
	}
	// Two leases: the child's renewals keep its slot.
	for end := time.Now().Add(2 * childLease); time.Now().Before(end); time.Sleep(childLease / 4) {
		if code := third(); code != http.StatusTooManyRequests {
			t.Fatalf("a third export while both instances hold a slot: %d, want 429", code)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed := time.Now()
	if code := third(); code != http.StatusTooManyRequests {
		t.Fatalf("right after the kill: %d, want 429 (the lease still runs)", code)
	}
	for third() != http.StatusOK {
		if time.Since(killed) > childLease+2*time.Second { // a generous tail: the survivor may be slow to ask
			t.Fatalf("the dead instance's slot still held %v after the kill (lease %v)", time.Since(killed), childLease)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the dead instance's slot expired %v after the kill (lease %v)", time.Since(killed).Round(time.Millisecond), childLease)
}

func TestSlotsConformance(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			storetest.RunSlots(t, func(t *testing.T) inflight.Store {
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			})
		})
	}
}

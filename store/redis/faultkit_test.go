package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// The fault tests run a redis-server of their own (redisproc_test.go) and
// break it the ways production Redis breaks: frozen, killed and restarted,
// stalled by a slow command, its scripts flushed, out of memory, flooded.
// Each goes through the path a user has: a go-redis client (with default
// options unless the test says otherwise), the Redis store, a Limiter and
// HTTP requests. Bounds on time
// are generous tails, never tight timers.

// bigBudget holds 100,000 tokens and refills 10 a day, nothing within a
// test: every token a key lost was taken by a decision, so counts are exact.
var bigBudget = ratelimit.Limit{Rate: 10, Period: 24 * time.Hour, Burst: 100_000}

// keyHeader names the key of a request; costHeader its cost (1 without it,
// 0 to read the budget without taking anything).
const keyHeader, costHeader = "X-Key", "X-Cost"

func headerCost(r *http.Request) int {
	if v := r.Header.Get(costHeader); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 1
}

// recordingStore wraps the Redis store and records what Redis answered to
// every call, including the answers that came after the limiter stopped
// waiting (the limiter leaves the call to finish on its own goroutine).
type recordingStore struct {
	inner ratelimit.Store

	calls   atomic.Int64 // calls made
	taken   atomic.Int64 // tokens Redis took, by the allowed calls
	late    atomic.Int64 // calls Redis refused as past their deadline (ErrLate)
	failed  atomic.Int64 // other errors
	running sync.WaitGroup

	mu     sync.Mutex
	errors []string    // a few distinct error texts
	starts []time.Time // when each failed call started (the first 10,000)
}

func (s *recordingStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	s.running.Add(1)
	defer s.running.Done()
	start := time.Now()
	res, err := s.inner.AllowN(ctx, key, l, n)
	switch {
	case err == nil:
		if res.Allowed {
			s.taken.Add(int64(n))
		}
	case errors.Is(err, redisstore.ErrLate):
		s.late.Add(1)
	default:
		s.failed.Add(1)
		s.mu.Lock()
		if len(s.errors) < 5 && !containsPrefix(s.errors, err.Error()) {
			s.errors = append(s.errors, err.Error())
		}
		if len(s.starts) < 10_000 {
			s.starts = append(s.starts, start)
		}
		s.mu.Unlock()
	}
	return res, err
}

func containsPrefix(list []string, s string) bool {
	for _, e := range list {
		if len(e) > 40 && len(s) > 40 && e[:40] == s[:40] || e == s {
			return true
		}
	}
	return false
}

// failedOutside counts the failed calls that started before from or at or
// after to: while Redis was running, such a call may have been run in time
// by Redis and have taken its tokens, its reply lost to the client's read
// timeout (the residual the package doc names). A call that started within
// [from, to), while Redis was stopped, can only have reached it late.
func (s *recordingStore) failedOutside(from, to time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, at := range s.starts {
		if at.Before(from) || !at.Before(to) {
			n++
		}
	}
	return n
}

func (s *recordingStore) errorTexts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errors...)
}

// wait waits until every call has returned, those the limiter gave up on
// included (go-redis's default 5 s read timeout bounds them).
func (s *recordingStore) wait(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("store calls still running 10s after the load stopped")
	}
}

// tally counts a limiter's decisions by source and outcome, and notes its
// breaker's changes.
type tally struct {
	n [4][4]atomic.Int64 // [Source][Outcome]

	mu      sync.Mutex
	changes []breakerChange
}

type breakerChange struct {
	at    time.Time
	state ratelimit.BreakerState
}

func (ta *tally) observer() ratelimit.Observer {
	return ratelimit.Observer{
		Decision: func(d ratelimit.Decision) { ta.n[d.Source][d.Outcome].Add(1) },
		BreakerChange: func(_ string, s ratelimit.BreakerState) {
			ta.mu.Lock()
			ta.changes = append(ta.changes, breakerChange{time.Now(), s})
			ta.mu.Unlock()
		},
	}
}

func (ta *tally) get(s ratelimit.Source, o ratelimit.Outcome) int64 { return ta.n[s][o].Load() }

// opened reports whether the breaker opened at some time.
func (ta *tally) opened() bool {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	for _, c := range ta.changes {
		if c.state == ratelimit.BreakerOpen {
			return true
		}
	}
	return false
}

func (ta *tally) String() string {
	var b strings.Builder
	for s := ratelimit.FromStore; s <= ratelimit.FromFailurePolicy; s++ {
		for o := ratelimit.OutcomeAllowed; o <= ratelimit.OutcomeErrored; o++ {
			if n := ta.n[s][o].Load(); n > 0 {
				fmt.Fprintf(&b, " %v/%v=%d", s, o, n)
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// faultLimiter is a limiter on rec under limit, keyed by keyHeader and
// costed by costHeader, that tells ta of its decisions.
func faultLimiter(t *testing.T, rec *recordingStore, limit ratelimit.Limit, ta *tally, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	opts = append([]ratelimit.Option{
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader(keyHeader)),
		ratelimit.WithKeySecret([]byte("the fault tests' key secret.....")),
		ratelimit.WithCost(headerCost),
		ratelimit.WithObserver(ta.observer()),
		ratelimit.WithLogger(testLogger(t)),
	}, opts...)
	l, err := ratelimit.New(rec, limit, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// defaultClient is a go-redis client with default options, as most users
// make it: 5 s read and write timeouts, 3 retries, context deadlines
// ignored on the socket. The limiter must bound decisions anyway.
func defaultClient(t *testing.T, addr string) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// recommendedClient is the go-redis client docs/redis.md recommends in
// front of a limiter with the default 100 ms budget.
func recommendedClient(t *testing.T, addr string) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{
		Addr:                  addr,
		DialTimeout:           250 * time.Millisecond,
		ReadTimeout:           100 * time.Millisecond,
		WriteTimeout:          100 * time.Millisecond,
		PoolTimeout:           100 * time.Millisecond,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// countErrors is an error handler that counts the failures told to it.
func countErrors(n *atomic.Int64) ratelimit.Option {
	return ratelimit.WithErrorHandler(func(*http.Request, error) { n.Add(1) })
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

// request sends GET / for key at cost (-1: the default of 1) through h and
// returns the status.
func request(h http.Handler, key string, cost int) int {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set(keyHeader, key)
	if cost >= 0 {
		r.Header.Set(costHeader, strconv.Itoa(cost))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// check decides on key at cost through l.AllowN, by the store, keyed as
// a request with key in keyHeader: it waits for the breaker to close and
// tries again if the store did not decide (a busy machine may time out a
// call), for at most 3 s.
func check(t *testing.T, l *ratelimit.Limiter, ta *tally, key string, cost int) ratelimit.Result {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		decided := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed) + ta.get(ratelimit.FromStore, ratelimit.OutcomeDenied)
		res, err := l.AllowN(context.Background(), strings.ToLower(keyHeader)+":"+key, cost)
		if err == nil && ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed)+ta.get(ratelimit.FromStore, ratelimit.OutcomeDenied) > decided {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("Check(%s, cost %d) not decided by the store within 3s: %v", key, cost, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// remaining reads key's budget with a call of cost 0, which takes nothing.
func remaining(t *testing.T, l *ratelimit.Limiter, ta *tally, key string) int {
	t.Helper()
	return check(t, l, ta, key, 0).Remaining
}

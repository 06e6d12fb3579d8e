package redis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
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
	"github.com/ratelimit-go/ratelimit/store/memory"
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
	errors []string // a few distinct error texts
}

func (s *recordingStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	s.running.Add(1)
	defer s.running.Done()
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
	for s := ratelimit.FromStore; s <= ratelimit.FromPolicy; s++ {
		for o := ratelimit.Allowed; o <= ratelimit.Errored; o++ {
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
		ratelimit.WithCost(headerCost),
		ratelimit.WithObserver(ta.observer()),
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
	return ratelimit.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) { n.Add(1) })
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

// check decides on key at cost through l.Check, by the store: it waits for
// the breaker to close and tries again if the store did not decide (a busy
// machine may time out a call), for at most 3 s.
func check(t *testing.T, l *ratelimit.Limiter, ta *tally, key string, cost int) ratelimit.Result {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		decided := ta.get(ratelimit.FromStore, ratelimit.Allowed) + ta.get(ratelimit.FromStore, ratelimit.Denied)
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(keyHeader, key)
		r.Header.Set(costHeader, strconv.Itoa(cost))
		res, err := l.Check(r)
		if err == nil && ta.get(ratelimit.FromStore, ratelimit.Allowed)+ta.get(ratelimit.FromStore, ratelimit.Denied) > decided {
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

// phase is a stretch of a fault test: before the fault, during it, after.
type phase int

const (
	before phase = iota
	during
	after
)

var phaseNames = [...]string{"before", "during", "after"}

// load sends requests through a handler from several goroutines and keeps
// statistics per phase, by the phase in which each request started.
type load struct {
	phase atomic.Int32
	stats [3]struct {
		requests atomic.Int64
		codes    [600]atomic.Int64
		maxNs    atomic.Int64
	}
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// startLoad runs workers goroutines that each send a request for key
// through h, then sleep pace, until Stop or the end of the test.
func startLoad(t *testing.T, h http.Handler, key string, workers int, pace time.Duration) *load {
	ctx, cancel := context.WithCancel(context.Background())
	ld := &load{stop: cancel}
	t.Cleanup(ld.Stop)
	for range workers {
		ld.wg.Add(1)
		go func() {
			defer ld.wg.Done()
			for ctx.Err() == nil {
				p := ld.phase.Load()
				start := time.Now()
				code := request(h, key, -1)
				took := int64(time.Since(start))
				st := &ld.stats[p]
				st.requests.Add(1)
				st.codes[code].Add(1)
				for {
					m := st.maxNs.Load()
					if took <= m || st.maxNs.CompareAndSwap(m, took) {
						break
					}
				}
				if pace > 0 {
					time.Sleep(pace)
				}
			}
		}()
	}
	return ld
}

func (ld *load) set(p phase) { ld.phase.Store(int32(p)) }

// Stop stops the workers and waits for them.
func (ld *load) Stop() { ld.stop(); ld.wg.Wait() }

func (ld *load) requests(p phase) int64 { return ld.stats[p].requests.Load() }
func (ld *load) code(p phase, c int) int64 {
	return ld.stats[p].codes[c].Load()
}
func (ld *load) max(p phase) time.Duration { return time.Duration(ld.stats[p].maxNs.Load()) }

// maxAll is the slowest request of any phase.
func (ld *load) maxAll() time.Duration {
	return max(ld.max(before), ld.max(during), ld.max(after))
}

// codes lists the statuses of phase p, such as "200×310 503×2".
func (ld *load) codes(p phase) string {
	var b strings.Builder
	for c := range ld.stats[p].codes {
		if n := ld.stats[p].codes[c].Load(); n > 0 {
			fmt.Fprintf(&b, " %d×%d", c, n)
		}
	}
	return strings.TrimSpace(b.String())
}

func (ld *load) report(t *testing.T, name string) {
	t.Helper()
	for p := before; p <= after; p++ {
		t.Logf("%s %s: %d requests, %s, slowest %v", name, phaseNames[p], ld.requests(p), ld.codes(p), ld.max(p).Round(time.Millisecond))
	}
}

// waitFor polls cond every 10 ms for at most limit and reports how long it
// took to hold.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// commandCalls returns the calls of each command INFO commandstats counts,
// such as "evalsha" → 12.
func commandCalls(t *testing.T, c *goredis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}

// scriptCalls is the number of EVALSHA and EVAL calls Redis has run.
func scriptCalls(t *testing.T, c *goredis.Client) int64 {
	t.Helper()
	m := commandCalls(t, c)
	return m["evalsha"] + m["eval"]
}

// TestFaultStoppedRedis freezes Redis (SIGSTOP) for 2 s under load from
// three limiters, one per failure policy, 8 goroutines each, and resumes it.
// It runs with a go-redis client of default options and with the options
// docs/redis.md recommends, and reports the client's pool statistics.
func TestFaultStoppedRedis(t *testing.T) {
	for _, tt := range []struct {
		name   string
		client func(t *testing.T, addr string) *goredis.Client
	}{
		{"default client", defaultClient},
		{"recommended client", recommendedClient},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startRedis(t)
			stoppedRedis(t, p, tt.client(t, p.Addr()))
		})
	}
}

func stoppedRedis(t *testing.T, p *redisProc, client *goredis.Client) {
	store := redisstore.New(client)
	fallback := memory.New()
	t.Cleanup(func() { fallback.Close() })
	policies := []struct {
		name   string
		opts   []ratelimit.Option
		during []int // the statuses requests may get while Redis is stopped
	}{
		{"fail-open", nil, []int{http.StatusOK}},
		{"fail-closed", []ratelimit.Option{ratelimit.WithFailClosed()}, []int{http.StatusServiceUnavailable}},
		// 1,000 instances: a share of 100 tokens, so the share shows.
		{"fallback", []ratelimit.Option{ratelimit.WithFallback(fallback, 1000)}, []int{http.StatusOK, http.StatusTooManyRequests}},
	}
	type run struct {
		rec    *recordingStore
		ta     *tally
		l      *ratelimit.Limiter
		ld     *load
		errors atomic.Int64
		calls  [3]int64 // store calls at the start of each phase
	}
	runs := make([]*run, len(policies))
	for i, pol := range policies {
		r := &run{rec: &recordingStore{inner: store}, ta: &tally{}}
		r.l = faultLimiter(t, r.rec, bigBudget, r.ta, append(pol.opts, ratelimit.WithName(pol.name), countErrors(&r.errors))...)
		if code := request(r.l.Handler(okHandler), "warm", -1); code != http.StatusOK {
			t.Fatalf("%s: warm-up request answered %d", pol.name, code)
		}
		runs[i] = r
	}
	admin := defaultClient(t, p.Addr())
	scripts0 := scriptCalls(t, admin)
	var calls0 int64
	for _, r := range runs {
		calls0 += r.rec.calls.Load()
		r.ld = startLoad(t, r.l.Handler(okHandler), "hot", 8, 5*time.Millisecond)
	}
	setPhase := func(ph phase) {
		for _, r := range runs {
			r.calls[ph] = r.rec.calls.Load()
			r.ld.set(ph)
		}
	}
	time.Sleep(300 * time.Millisecond)
	p.Stop()
	setPhase(during)
	time.Sleep(2 * time.Second)
	p.Cont()
	setPhase(after)
	closed := waitFor(t, 3*time.Second, "every breaker closed after SIGCONT", func() bool {
		for _, r := range runs {
			if r.l.Breaker().State() != ratelimit.BreakerClosed {
				return false
			}
		}
		return true
	})
	time.Sleep(300 * time.Millisecond)
	for _, r := range runs {
		r.ld.Stop()
	}
	for _, r := range runs {
		r.rec.wait(t)
	}
	// Calls Redis ran whose answers no one read: sent while it was stopped
	// by a client that gave up on them (ContextTimeoutEnabled closes the
	// connection); they reached Redis late, as did those answered ErrLate.
	var answered, late int64
	for _, r := range runs {
		answered += r.rec.calls.Load() - r.rec.failed.Load()
		late += r.rec.late.Load()
	}
	unread := scriptCalls(t, admin) - scripts0 - (answered - calls0)
	t.Logf("calls that reached Redis after their deadline: %d answered ErrLate, %d run with no one left to read the answer", late, unread)
	if late+unread == 0 {
		t.Error("no call reached Redis after its deadline: the test did not exercise late calls")
	}
	ps := client.PoolStats()
	t.Logf("all three breakers closed %v after SIGCONT; go-redis pool: %d connections dialed (misses), %d waits for a connection timed out, %d open at the end",
		closed.Round(time.Millisecond), ps.Misses, ps.Timeouts, ps.TotalConns)

	for i, pol := range policies {
		r := runs[i]
		t.Run(pol.name, func(t *testing.T) {
			r.ld.report(t, pol.name)
			ta, rec, ld := r.ta, r.rec, r.ld
			endDuring := r.calls[after]
			callsDuring := endDuring - r.calls[during]
			t.Logf("store calls while stopped: %d for %d requests; decisions: %v; errors told: %d", callsDuring, ld.requests(during), ta, r.errors.Load())
			t.Logf("Redis: took %d tokens, refused %d late calls, %d other errors %q", rec.taken.Load(), rec.late.Load(), rec.failed.Load(), rec.errorTexts())

			if m := ld.maxAll(); m > 500*time.Millisecond {
				t.Errorf("slowest request took %v; want every one answered within about the 100ms budget (< 500ms)", m)
			}
			for c := range 600 {
				if n := ld.code(during, c); n > 0 && !contains(pol.during, c) {
					t.Errorf("%d requests answered %d while Redis was stopped; want only %v", n, c, pol.during)
				}
			}
			if !ta.opened() {
				t.Error("the breaker never opened")
			}
			if callsDuring > 20 || callsDuring*10 > ld.requests(during) {
				t.Errorf("%d store calls for %d requests while Redis was stopped: want the open breaker to spare it (at most 20, under a tenth)", callsDuring, ld.requests(during))
			}
			if pol.name == "fallback" {
				allowed, denied := ta.get(ratelimit.FromFallback, ratelimit.Allowed), ta.get(ratelimit.FromFallback, ratelimit.Denied)
				if allowed != 100 || denied == 0 {
					t.Errorf("fallback admitted %d and denied %d; want exactly its share, 100,000/1,000 = 100, then denials", allowed, denied)
				}
			}

			// Tokens: Redis took exactly what its answers say, and the
			// calls that reached it late took nothing.
			byLimiter := ta.get(ratelimit.FromStore, ratelimit.Allowed) - 1 // less the warm-up, another key
			rem := remaining(t, r.l, ta, "hot")
			consumed := int64(bigBudget.Burst - rem)
			t.Logf("hot key: %d tokens consumed; Redis answered allowed for %d tokens, the limiter saw %d in time", consumed, rec.taken.Load()-1, byLimiter)
			if consumed != rec.taken.Load()-1 {
				t.Errorf("the hot key lost %d tokens but Redis admitted %d requests: a decision counted twice or a late one took tokens", consumed, rec.taken.Load()-1)
			}
			if consumed < byLimiter {
				t.Errorf("the hot key lost %d tokens, fewer than the %d requests admitted by Redis", consumed, byLimiter)
			}

			// Limiting resumed: the key's budget is enforced again.
			if res := check(t, r.l, ta, "hot", rem+1); res.Allowed {
				t.Errorf("after SIGCONT a request of cost %d on a key with %d left was allowed", rem+1, rem)
			}
			if res := check(t, r.l, ta, "hot", rem); !res.Allowed || res.Remaining != 0 {
				t.Errorf("after SIGCONT a request of cost %d on a key with %d left: %+v; want allowed, none left", rem, rem, res)
			}
		})
	}
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// TestFaultKillAndRestart kills Redis, sends requests while it is down,
// then starts an empty Redis on the same port: no persistence, no scripts.
func TestFaultKillAndRestart(t *testing.T) {
	p := startRedis(t)
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	var told atomic.Int64
	limit := ratelimit.PerHour(5)
	l := faultLimiter(t, rec, limit, ta, ratelimit.WithFailClosed(), countErrors(&told))
	h := l.Handler(okHandler)
	for i := range 3 {
		if code := request(h, "k", -1); code != http.StatusOK {
			t.Fatalf("request %d before the kill: %d", i+1, code)
		}
	}
	if rem := remaining(t, l, ta, "k"); rem != 2 {
		t.Fatalf("before the kill: %d left, want 2", rem)
	}

	p.Kill()
	callsAtKill := rec.calls.Load()
	var slowest time.Duration
	var codes [600]int
	const down = 50
	for range down {
		start := time.Now()
		codes[request(h, "k", -1)]++
		slowest = max(slowest, time.Since(start))
		time.Sleep(10 * time.Millisecond)
	}
	callsDown := rec.calls.Load() - callsAtKill
	t.Logf("while down: %d requests, %d answered 503, slowest %v, %d store calls; errors %q", down, codes[503], slowest.Round(time.Millisecond), callsDown, rec.errorTexts())
	if codes[http.StatusServiceUnavailable] != down {
		t.Errorf("while Redis was down %d of %d requests got 503, want all (fail closed)", codes[http.StatusServiceUnavailable], down)
	}
	if slowest > 500*time.Millisecond {
		t.Errorf("slowest request while down took %v, want within about the 100ms budget (< 500ms)", slowest)
	}
	if !ta.opened() || callsDown > 15 {
		t.Errorf("breaker opened: %v, %d store calls for %d requests; want it open, sparing the store", ta.opened(), callsDown, down)
	}

	p.Restart()
	restarted := time.Now()
	before := ta.get(ratelimit.FromStore, ratelimit.Allowed)
	var afterRestart int
	for ta.get(ratelimit.FromStore, ratelimit.Allowed) == before {
		if time.Since(restarted) > 5*time.Second {
			t.Fatalf("no decision by the store within 5s of the restart; decisions %v; errors %q", ta, rec.errorTexts())
		}
		afterRestart++
		request(h, "other", -1)
		time.Sleep(10 * time.Millisecond)
	}
	recovered := time.Since(restarted)
	admin := defaultClient(t, p.Addr())
	calls := commandCalls(t, admin)
	t.Logf("recovered %v after the restart (%d requests); the new server ran evalsha %d, eval %d times", recovered.Round(time.Millisecond), afterRestart, calls["evalsha"], calls["eval"])
	if recovered > 3*time.Second {
		t.Errorf("limiting resumed %v after the restart, want within about a second or two", recovered)
	}
	for _, e := range rec.errorTexts() {
		if strings.Contains(e, "NOSCRIPT") {
			t.Errorf("NOSCRIPT reached the caller: %s", e)
		}
	}
	if calls["eval"] < 1 {
		t.Errorf("the new server never ran EVAL: the script was not sent again after NOSCRIPT")
	}
	// Documented: a restart without persistence forgets every budget.
	if rem := remaining(t, l, ta, "k"); rem != limit.Rate {
		t.Errorf("after a restart without persistence k has %d left, want the full %d: budgets are forgotten", rem, limit.Rate)
	}
	for i := range 5 {
		if code := request(h, "k", -1); code != http.StatusOK {
			t.Fatalf("after the restart request %d: %d, want 200", i+1, code)
		}
	}
	if code := request(h, "k", -1); code != http.StatusTooManyRequests {
		t.Errorf("the sixth request at 5 per hour after the restart: %d, want 429", code)
	}
}

// TestFaultDebugSleep stalls Redis for a second with DEBUG SLEEP, sent by
// another client, under load: the decisions queued behind it reach it
// after their deadline and take nothing.
func TestFaultDebugSleep(t *testing.T) {
	p := startRedis(t, "--enable-debug-command", "local")
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	var told atomic.Int64
	l := faultLimiter(t, rec, bigBudget, ta, countErrors(&told))
	h := l.Handler(okHandler)
	request(h, "hot", -1) // loads the script

	ld := startLoad(t, h, "hot", 4, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	ld.set(during)
	admin := defaultClient(t, p.Addr())
	start := time.Now()
	if err := admin.Do(context.Background(), "debug", "sleep", "1").Err(); err != nil {
		ld.Stop()
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	slept := time.Since(start)
	ld.set(after)
	waitFor(t, 3*time.Second, "breaker closed after the sleep", func() bool { return l.Breaker().State() == ratelimit.BreakerClosed })
	time.Sleep(200 * time.Millisecond)
	ld.Stop()
	rec.wait(t)
	ld.report(t, "debug sleep")
	t.Logf("DEBUG SLEEP returned after %v; decisions %v; Redis took %d tokens, refused %d late calls, %d other errors %q",
		slept.Round(time.Millisecond), ta, rec.taken.Load(), rec.late.Load(), rec.failed.Load(), rec.errorTexts())

	if m := ld.maxAll(); m > 500*time.Millisecond {
		t.Errorf("slowest request took %v during a 1s stall; want within about the 100ms budget (< 500ms)", m)
	}
	if n := ld.requests(during) - ld.code(during, http.StatusOK); n != 0 {
		t.Errorf("%d requests during the stall not answered 200 (fail open): %s", n, ld.codes(during))
	}
	if ta.get(ratelimit.FromPolicy, ratelimit.Errored) == 0 {
		t.Error("no decision failed during a 1s stall")
	}
	if rec.late.Load() == 0 {
		t.Error("no call queued behind DEBUG SLEEP came back ErrLate")
	}
	inTime := ta.get(ratelimit.FromStore, ratelimit.Allowed)
	consumed := int64(bigBudget.Burst - remaining(t, l, ta, "hot"))
	if consumed != rec.taken.Load() {
		t.Errorf("the key lost %d tokens, Redis admitted %d: a call that reached it late took tokens", consumed, rec.taken.Load())
	}
	t.Logf("hot key: %d tokens consumed = %d admitted by Redis; the limiter saw %d of them in time", consumed, rec.taken.Load(), inTime)
}

// TestFaultScriptFlush flushes Redis's script cache every 25 ms under load:
// every decision still succeeds (EVAL after NOSCRIPT) and counts once.
func TestFaultScriptFlush(t *testing.T) {
	p := startRedis(t)
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	var told atomic.Int64
	// A budget of a second: this test is about NOSCRIPT, and a busy
	// machine's scheduling must not fail it.
	l := faultLimiter(t, rec, bigBudget, ta, countErrors(&told), ratelimit.WithTimeout(time.Second))
	h := l.Handler(okHandler)
	admin := defaultClient(t, p.Addr())

	ld := startLoad(t, h, "hot", 4, 2*time.Millisecond)
	flushes := 0
	for range 40 {
		time.Sleep(25 * time.Millisecond)
		if err := admin.ScriptFlush(context.Background()).Err(); err != nil {
			ld.Stop()
			t.Fatal(err)
		}
		flushes++
	}
	ld.Stop()
	rec.wait(t)
	calls := commandCalls(t, admin)
	ld.report(t, "script flush")
	t.Logf("%d flushes; evalsha %d, eval %d; decisions %v; errors %d %q", flushes, calls["evalsha"], calls["eval"], ta, rec.failed.Load()+rec.late.Load(), rec.errorTexts())

	if n := rec.failed.Load() + rec.late.Load(); n != 0 || told.Load() != 0 {
		t.Errorf("%d store errors and %d failed decisions with SCRIPT FLUSH: want none", n, told.Load())
	}
	if calls["eval"] < 10 {
		t.Errorf("only %d EVALs after %d flushes: the flushes did not hit the traffic", calls["eval"], flushes)
	}
	allowed := ta.get(ratelimit.FromStore, ratelimit.Allowed)
	consumed := int64(bigBudget.Burst - remaining(t, l, ta, "hot"))
	if consumed != allowed || consumed != rec.taken.Load() || allowed != ld.requests(before) {
		t.Errorf("%d requests, %d allowed, Redis admitted %d, the key lost %d tokens: want all equal", ld.requests(before), allowed, rec.taken.Load(), consumed)
	}
}

// countingHandler is a slog.Handler that counts records by message.
type countingHandler struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.n[r.Message]++
	h.mu.Unlock()
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[msg]
}

// captureSlog makes h the default slog handler until the test ends.
func captureSlog(t *testing.T) *countingHandler {
	h := &countingHandler{n: map[string]int{}}
	prev, w, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() {
		slog.SetDefault(prev)
		log.SetOutput(w) // SetDefault pointed package log at h
		log.SetFlags(flags)
	})
	return h
}

// TestFaultOutOfMemory fills a Redis of 2 MB maxmemory with noeviction:
// every decision that would write fails with OOM until memory is freed.
func TestFaultOutOfMemory(t *testing.T) {
	p := startRedis(t, "--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
	logs := captureSlog(t)
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	l := faultLimiter(t, rec, bigBudget, ta) // the default error handler: slog, throttled
	h := l.Handler(okHandler)
	request(h, "hot", -1) // loads the script

	admin := defaultClient(t, p.Addr())
	ctx := context.Background()
	// Fill it in pieces: one big SET would be refused whole, its query
	// buffer alone being over the limit.
	chunk := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		err := admin.Append(ctx, "fill", chunk).Err()
		if err != nil && strings.HasPrefix(err.Error(), "OOM") {
			break
		}
		if err != nil || i > 100 {
			t.Fatalf("filling 2 MB with 64 KB pieces: %v after %d pieces", err, i)
		}
	}
	if err := admin.Set(ctx, "probe", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("SET after filling 2 MB: %v, want an OOM error", err)
	}
	calls0 := rec.calls.Load()
	ld := startLoad(t, h, "hot", 8, 5*time.Millisecond)
	ld.set(during)
	time.Sleep(1500 * time.Millisecond)
	callsOOM := rec.calls.Load() - calls0
	if err := admin.Del(ctx, "fill").Err(); err != nil {
		ld.Stop()
		t.Fatal(err)
	}
	ld.set(after)
	before := ta.get(ratelimit.FromStore, ratelimit.Allowed)
	recovered := waitFor(t, 3*time.Second, "a decision by the store after freeing memory", func() bool {
		return ta.get(ratelimit.FromStore, ratelimit.Allowed) > before
	})
	time.Sleep(200 * time.Millisecond)
	ld.Stop()
	rec.wait(t)

	errLines := logs.count("ratelimit: request not decided by the store")
	opened := logs.count("ratelimit: store failing, breaker open: the failure policy answers")
	ld.report(t, "oom")
	t.Logf("out of memory for 1.5s: %d requests, %d store calls, %d failed decisions; %d error log lines, %d breaker-open lines; errors %q",
		ld.requests(during), callsOOM, ta.get(ratelimit.FromPolicy, ratelimit.Errored), errLines, opened, rec.errorTexts())
	t.Logf("limiting resumed %v after DEL freed the memory; decisions %v", recovered.Round(time.Millisecond), ta)

	if n := ld.requests(during) - ld.code(during, http.StatusOK); n != 0 {
		t.Errorf("%d requests not answered 200 while Redis was out of memory (fail open): %s", n, ld.codes(during))
	}
	texts := rec.errorTexts()
	if len(texts) == 0 || !strings.Contains(texts[0], "OOM") {
		t.Errorf("store errors %q, want OOM", texts)
	}
	if !ta.opened() || callsOOM*10 > ld.requests(during) {
		t.Errorf("breaker opened: %v; %d store calls for %d requests; want it open, sparing Redis", ta.opened(), callsOOM, ld.requests(during))
	}
	if errLines < 1 || errLines > 4 {
		t.Errorf("%d error log lines for %d failed decisions in about 2s, want 1 to 4: at most one a second", errLines, ta.get(ratelimit.FromPolicy, ratelimit.Errored))
	}
	if opened != 1 {
		t.Errorf("%d breaker-open log lines, want 1", opened)
	}
	if recovered > 2*time.Second {
		t.Errorf("limiting resumed %v after memory was freed, want within about a second", recovered)
	}
	consumed := int64(bigBudget.Burst - remaining(t, l, ta, "hot"))
	if consumed != rec.taken.Load() {
		t.Errorf("the key lost %d tokens, Redis admitted %d: a failed decision took tokens", consumed, rec.taken.Load())
	}
}

// TestFaultDenyCacheSparesRedis floods one key under PerMinute(10) with
// 2,000 requests: after the first denial the limiter denies locally, and
// Redis runs a handful of scripts. One goroutine shows the exact cost; 8
// show what concurrency adds (denials already in flight, and a denial
// forgotten when an admission answered before it returns after it).
func TestFaultDenyCacheSparesRedis(t *testing.T) {
	for _, tt := range []struct {
		workers    int
		maxScripts int64
	}{
		{1, 10 + 1 + 1}, // 10 admissions, 1 denial, the EVAL that loads the script
		{8, 40},
	} {
		t.Run(fmt.Sprintf("%d goroutines", tt.workers), func(t *testing.T) {
			p := startRedis(t)
			client := defaultClient(t, p.Addr())
			rec, ta := &recordingStore{inner: redisstore.New(client)}, &tally{}
			l := faultLimiter(t, rec, ratelimit.PerMinute(10), ta)
			h := l.Handler(okHandler)

			scripts0 := scriptCalls(t, client)
			const total = 2000
			var codes [600]atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for range tt.workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range total / tt.workers {
						codes[request(h, "flood", -1)].Add(1)
					}
				}()
			}
			wg.Wait()
			took := time.Since(start)
			scripts := scriptCalls(t, client) - scripts0
			t.Logf("%d requests in %v: %d allowed, %d denied; %d store calls, %d script calls in Redis (EVALSHA+EVAL, the first load included); decisions %v",
				total, took.Round(time.Millisecond), codes[200].Load(), codes[429].Load(), rec.calls.Load(), scripts, ta)
			if codes[200].Load() != 10 || codes[429].Load() != total-10 {
				t.Errorf("allowed %d, denied %d, want exactly 10 and %d", codes[200].Load(), codes[429].Load(), total-10)
			}
			if scripts > tt.maxScripts {
				t.Errorf("Redis ran %d scripts for a flood of %d on one key, want at most %d", scripts, total, tt.maxScripts)
			}
		})
	}
}

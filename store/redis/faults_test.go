package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

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
	if slowest > slack(500*time.Millisecond) {
		t.Errorf("slowest request while down took %v, want within about the 100ms budget (< %v)", slowest, slack(500*time.Millisecond))
	}
	if !ta.opened() || callsDown > 15 {
		t.Errorf("breaker opened: %v, %d store calls for %d requests; want it open, sparing the store", ta.opened(), callsDown, down)
	}

	p.Restart()
	restarted := time.Now()
	before := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed)
	var afterRestart int
	for ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed) == before {
		if time.Since(restarted) > slack(5*time.Second) {
			t.Fatalf("no decision by the store within %v of the restart; decisions %v; errors %q", slack(5*time.Second), ta, rec.errorTexts())
		}
		afterRestart++
		request(h, "other", -1)
		time.Sleep(10 * time.Millisecond)
	}
	recovered := time.Since(restarted)
	admin := defaultClient(t, p.Addr())
	calls := commandCalls(t, admin)
	t.Logf("recovered %v after the restart (%d requests); the new server ran evalsha %d, eval %d times", recovered.Round(time.Millisecond), afterRestart, calls["evalsha"], calls["eval"])
	if recovered > slack(3*time.Second) {
		t.Errorf("limiting resumed %v after the restart, want within about a second or two (< %v)", recovered, slack(3*time.Second))
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

// TestFaultDebugSleep stalls Redis for 2 s with DEBUG SLEEP, sent by
// another client, under load: the decisions queued behind it reach it
// after their deadline and take nothing, and no request waits out the
// stall. 2 s, below go-redis's 3 s ReadTimeout: a call sent as the stall
// began is answered (late) when it ends, not cut by the client's read
// timeout at about the same instant, which left a loaded run with no late
// call to check.
func TestFaultDebugSleep(t *testing.T) {
	p := startRedis(t, "--enable-debug-command", "local")
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	var told atomic.Int64
	l := faultLimiter(t, rec, bigBudget, ta, countErrors(&told), ratelimit.WithFailOpen())
	h := l.Handler(okHandler)
	request(h, "hot", -1) // loads the script

	ld := startLoad(t, h, "hot", 4, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	ld.set(during)
	admin := defaultClient(t, p.Addr())
	start := time.Now()
	if err := admin.Do(context.Background(), "debug", "sleep", "2").Err(); err != nil {
		ld.Stop()
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	slept := time.Since(start)
	ld.set(after)
	waitFor(t, slack(3*time.Second), "breaker closed after the sleep", func() bool { return l.Breaker().State() == ratelimit.BreakerClosed })
	time.Sleep(200 * time.Millisecond)
	ld.Stop()
	rec.wait(t)
	ld.report(t, "debug sleep")
	t.Logf("DEBUG SLEEP returned after %v; decisions %v; Redis took %d tokens, refused %d late calls, %d other errors %q",
		slept.Round(time.Millisecond), ta, rec.taken.Load(), rec.late.Load(), rec.failed.Load(), rec.errorTexts())

	if m := ld.maxAll(); m > slack(500*time.Millisecond) {
		t.Errorf("slowest request took %v during a %v stall; want within about the 100ms budget (< %v)", m, slept.Round(time.Millisecond), slack(500*time.Millisecond))
	}
	if n := ld.requests(during) - ld.code(during, http.StatusOK); n != 0 {
		t.Errorf("%d requests during the stall not answered 200 (fail open): %s", n, ld.codes(during))
	}
	if ta.get(ratelimit.FromFailurePolicy, ratelimit.OutcomeErrored) == 0 {
		t.Error("no decision failed during a 2s stall")
	}
	if rec.late.Load() == 0 {
		t.Error("no call queued behind DEBUG SLEEP came back ErrLate")
	}
	inTime := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed)
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
	allowed := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed)
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

// countingLogger returns a counting handler and the option that makes a
// limiter log to it.
func countingLogger() (*countingHandler, ratelimit.Option) {
	h := &countingHandler{n: map[string]int{}}
	return h, ratelimit.WithLogger(slog.New(h))
}

// TestFaultOutOfMemory fills a Redis of 2 MB maxmemory with noeviction:
// every decision that would write fails with OOM until memory is freed.
func TestFaultOutOfMemory(t *testing.T) {
	p := startRedis(t, "--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
	logs, logTo := countingLogger()
	store := redisstore.New(defaultClient(t, p.Addr()))
	rec, ta := &recordingStore{inner: store}, &tally{}
	l := faultLimiter(t, rec, bigBudget, ta, logTo, ratelimit.WithFailOpen()) // the default error handler: slog, throttled
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
	keepFull(t, admin)
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
	before := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed)
	recovered := waitFor(t, slack(3*time.Second), "a decision by the store after freeing memory", func() bool {
		return ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed) > before
	})
	time.Sleep(200 * time.Millisecond)
	ld.Stop()
	rec.wait(t)

	errLines := logs.count("ratelimit: request not decided by the store")
	opened := logs.count("ratelimit: store failing, breaker open: the failure policy answers")
	ld.report(t, "oom")
	t.Logf("out of memory for 1.5s: %d requests, %d store calls, %d failed decisions; %d error log lines, %d breaker-open lines; errors %q",
		ld.requests(during), callsOOM, ta.get(ratelimit.FromFailurePolicy, ratelimit.OutcomeErrored), errLines, opened, rec.errorTexts())
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
		t.Errorf("%d error log lines for %d failed decisions in about 2s, want 1 to 4: at most one a second", errLines, ta.get(ratelimit.FromFailurePolicy, ratelimit.OutcomeErrored))
	}
	if opened != 1 {
		t.Errorf("%d breaker-open log lines, want 1", opened)
	}
	if recovered > slack(2*time.Second) {
		t.Errorf("limiting resumed %v after memory was freed, want within about a second (< %v)", recovered, slack(2*time.Second))
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
			// A budget of seconds: this test counts scripts, and a busy
			// machine's scheduling must not fail a decision.
			l := faultLimiter(t, rec, ratelimit.PerMinute(10), ta, ratelimit.WithTimeout(30*time.Second))
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

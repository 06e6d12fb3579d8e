package redisstore_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestFaultStoppedRedis freezes Redis (SIGSTOP) for 3 s under load from
// three limiters, one per failure policy, 8 goroutines each, and resumes it.
// It runs with a go-redis client of default options and with the options
// docs/redis.md recommends, and reports the client's pool statistics.
func TestFaultStoppedRedis(t *testing.T) {
	for _, tt := range []struct {
		name     string
		client   func(t *testing.T, addr string) *goredis.Client
		readsAll bool
	}{
		{"default client", defaultClient, true},
		{"recommended client", recommendedClient, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startRedis(t)
			stoppedRedis(t, p, tt.client(t, p.Addr()), tt.readsAll)
		})
	}
}

// stoppedRedis runs the test on client. readsAll says that client reads
// every reply, however late (it ignores context deadlines on the socket and
// reads for 5 s): then every token the hot key lost is one Redis answered.
func stoppedRedis(t *testing.T, p *redisProc, client *goredis.Client, readsAll bool) {
	store := redisstore.New(client)
	fallback := memory.New()
	t.Cleanup(func() { fallback.Close() })
	policies := []struct {
		name   string
		opts   []ratelimit.Option
		during []int // the statuses requests may get while Redis is stopped
	}{
		{"fail-open", []ratelimit.Option{ratelimit.WithFailOpen()}, []int{http.StatusOK}},
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
	stoppedAt := time.Now()
	setPhase(during)
	time.Sleep(3 * time.Second) // longer than slack(500 ms): a request that waited it out shows
	resumedAt := time.Now()
	p.Cont()
	setPhase(after)
	closed := waitFor(t, slack(3*time.Second), "every breaker closed after SIGCONT", func() bool {
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

			if m := ld.maxAll(); m > slack(500*time.Millisecond) {
				t.Errorf("slowest request took %v; want every one answered within about the 100ms budget (< %v)", m, slack(500*time.Millisecond))
			}
			for c := range 600 {
				if n := ld.code(during, c); n > 0 && !contains(pol.during, c) {
					t.Errorf("%d requests answered %d while Redis was stopped; want only %v", n, c, pol.during)
				}
			}
			if !ta.opened() {
				t.Error("the breaker never opened")
			}
			// The calls in flight as Redis stopped (8), those of the first
			// budget after its last answer, which the breaker does not
			// count (about one per goroutine), the 5 that open it, and a
			// probe per cool-down (about 7 in 3 s): 8-13 on a quiet
			// machine, 24 seen on a loaded one, whose timers fire late.
			if callsDuring > 40 || callsDuring*10 > ld.requests(during) {
				t.Errorf("%d store calls for %d requests while Redis was stopped: want the open breaker to spare it (at most 40, under a tenth)", callsDuring, ld.requests(during))
			}
			if pol.name == "fallback" {
				allowed, denied := ta.get(ratelimit.FromFallback, ratelimit.OutcomeAllowed), ta.get(ratelimit.FromFallback, ratelimit.OutcomeDenied)
				if allowed != 100 || denied == 0 {
					t.Errorf("fallback admitted %d and denied %d; want exactly its share, 100,000/1,000 = 100, then denials", allowed, denied)
				}
			}

			// Tokens: Redis took exactly what its answers say, and the
			// calls that reached it late took nothing.
			byLimiter := ta.get(ratelimit.FromStore, ratelimit.OutcomeAllowed) - 1 // less the warm-up, another key
			rem := remaining(t, r.l, ta, "hot")
			consumed := int64(bigBudget.Burst - rem)
			t.Logf("hot key: %d tokens consumed; Redis answered allowed for %d tokens, the limiter saw %d in time", consumed, rec.taken.Load()-1, byLimiter)
			// A client that gives up reading at the deadline (the
			// recommended one) may lose the reply of a call Redis ran in
			// time: at most one token for each call that failed while
			// Redis was running. A call sent while it was stopped reached
			// it after its deadline and must have taken nothing.
			// Behind the fallback, the first calls after the outage also
			// carry what it admitted (its share, 100): a lost reply of one
			// of those took the debt too, and the debt is charged again
			// by the next call (the safe side: fewer admitted, never more).
			var inTime, most int64
			if !readsAll {
				inTime = rec.failedOutside(stoppedAt, resumedAt)
			}
			most = inTime
			if pol.name == "fallback" {
				most = inTime * (1 + 100)
			}
			if lost := consumed - (rec.taken.Load() - 1); lost < 0 || lost > most {
				t.Errorf("the hot key lost %d tokens but Redis admitted %d requests, and %d failed calls were sent while Redis ran: a decision counted twice or a late one took tokens", consumed, rec.taken.Load()-1, inTime)
			} else if lost > 0 {
				t.Logf("%d tokens taken by calls Redis ran in time whose replies the client stopped reading (of %d calls that failed while Redis ran)", lost, inTime)
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

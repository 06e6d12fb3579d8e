package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// lateHook gets in the way of the first in-flight Acquire: with hold it
// holds its reply until hold is closed (a reply stuck past the budget);
// with lose it replaces the reply with an error (a reply lost after the
// script ran); with reorder it answers with an error at once and sends
// the Acquire only after a release ran (a call stuck in a stalled
// server's buffers, run after the release sent on another connection),
// and sends its reply to stale. It sends the operation of every script
// call that ran to ran.
type lateHook struct {
	mode     string // "hold", "lose" or "reorder"
	hold     chan struct{}
	client   goredis.UniversalClient
	once     atomic.Bool
	ran      chan string
	released chan struct{} // closed when a release ran
	relOnce  sync.Once
	stale    chan []int64
}

func newLateHook(c goredis.UniversalClient, mode string) *lateHook {
	h := &lateHook{mode: mode, hold: make(chan struct{}), client: c, ran: make(chan string, 64),
		released: make(chan struct{}), stale: make(chan []int64, 1)}
	c.AddHook(h)
	return h
}

type bypassHook struct{}

func (h *lateHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *lateHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// scriptOp is the operation of an inflight.lua call (evalsha|eval, sha or
// script, numkeys, keys..., op, ...), or "".
func scriptOp(args []any) string {
	if len(args) < 4 {
		return ""
	}
	n, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || len(args) <= 3+n {
		return ""
	}
	return fmt.Sprint(args[3+n])
}

func (h *lateHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		op := scriptOp(cmd.Args())
		if ctx.Value(bypassHook{}) != nil {
			return next(ctx, cmd)
		}
		if op == "a" && h.mode == "reorder" && h.once.CompareAndSwap(false, true) {
			args := cmd.Args()
			go func() {
				<-h.released
				stale := goredis.NewIntSliceCmd(ctx, args...)
				h.client.Process(context.WithValue(context.Background(), bypassHook{}, true), stale)
				v, _ := stale.Result()
				h.stale <- v
			}()
			err := errors.New("i/o timeout: the call is stuck in the server's buffers")
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		if err != nil || op == "" {
			return err // NOSCRIPT: nothing ran, the script is sent next
		}
		if op == "a" && h.mode != "reorder" && h.once.CompareAndSwap(false, true) {
			if h.mode == "lose" {
				err = errors.New("i/o timeout: the reply was lost")
				cmd.SetErr(err)
			} else {
				<-h.hold
			}
		}
		if op == "r" {
			h.relOnce.Do(func() { close(h.released) })
		}
		select {
		case h.ran <- op:
		default: // nobody waits for so many
		}
		return err
	}
}

// TestInFlightGivesBackALateAcquire: an Acquire whose script ran but whose
// reply came after the time budget, or never (an error after the script
// ran), or that ran only after its release, leaves no slot held: the
// request is answered within the budget by the failure policy, and the
// slot is released (or never taken), so the key's next request gets it
// rather than 429 until the lease ends.
func TestInFlightGivesBackALateAcquire(t *testing.T) {
	for _, srv := range servers(t) {
		for _, mode := range []string{"hold", "lose", "reorder"} {
			t.Run(srv.name+"/"+mode, func(t *testing.T) {
				c := srv.client(t)
				hook := newLateHook(c, mode)
				f, err := inflight.New(redisstore.New(c, redisstore.WithPrefix(prefix(t))), 1,
					inflight.WithName("export"), inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key")),
					inflight.WithKeySecret([]byte("sixteen byte secret!")), inflight.WithTimeout(200*time.Millisecond),
					inflight.WithErrorHandler(func(*http.Request, error) {}))
				if err != nil {
					t.Fatal(err)
				}
				request := func() (code int, limit string, ran bool) {
					rec := httptest.NewRecorder()
					f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true })).ServeHTTP(rec, exportRequest())
					return rec.Code, rec.Header().Get("X-Ratelimit-Limit"), ran
				}
				guard := time.After(10 * time.Second) // against a hang, not a wait for time to pass
				wait := func(op string) {
					t.Helper()
					for {
						select {
						case got := <-hook.ran:
							if got == op {
								return
							}
						case <-guard:
							t.Fatalf("no %q call ran within 10s", op)
						}
					}
				}
				start := time.Now()
				if code, limit, ran := request(); code != http.StatusOK || limit != "" || !ran {
					t.Fatalf("the stuck request: %d, limit header %q, ran %v; want served by the failure policy", code, limit, ran)
				}
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("the stuck request took %v, far past its budget", took)
				}
				switch mode {
				case "hold":
					if code, _, _ := request(); code != http.StatusTooManyRequests {
						t.Fatalf("while the late reply is stuck: %d, want 429 (the script ran and took the slot)", code)
					}
					close(hook.hold)
					wait("r") // the late slot given back
				case "lose":
					wait("r")
				case "reorder":
					select {
					case v := <-hook.stale:
						if len(v) != 2 || v[0] != 0 {
							t.Fatalf("the Acquire run after its release answered %v, want [0 0]: it takes nothing", v)
						}
					case <-guard:
						t.Fatal("the stuck Acquire did not run within 10s")
					}
				}
				if code, limit, ran := request(); code != http.StatusOK || limit != "1" || !ran {
					t.Fatalf("after the late reply: %d, limit header %q, ran %v; want served with the slot", code, limit, ran)
				}
			})
		}
	}
}

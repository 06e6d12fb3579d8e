package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// lateHook gets in the way of the first in-flight Acquire that ran on
// the server: it holds its reply until hold is closed (a reply stuck past
// the budget), or with lose replaces it with an error (a reply lost after
// the script ran). It sends the operation of every script call that ran.
type lateHook struct {
	hold chan struct{}
	lose bool
	once atomic.Bool
	ran  chan string
}

func (h *lateHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *lateHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

func (h *lateHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if err != nil || len(args) < 5 {
			return err // NOSCRIPT: nothing ran, the script is sent next
		}
		op := fmt.Sprint(args[4]) // evalsha|eval, sha|script, 1, key, op
		if op == "a" && h.once.CompareAndSwap(false, true) {
			if h.lose {
				err = errors.New("i/o timeout: the reply was lost")
				cmd.SetErr(err)
			} else {
				<-h.hold
			}
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
// ran), leaves no slot held: the request is answered within the budget by
// the failure policy, and the slot is released, so the key's next request
// gets it rather than 429 until the lease ends.
func TestInFlightGivesBackALateAcquire(t *testing.T) {
	for _, srv := range servers(t) {
		for _, lose := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lost reply %v", srv.name, lose), func(t *testing.T) {
				c := srv.client(t)
				hook := &lateHook{hold: make(chan struct{}), lose: lose, ran: make(chan string, 64)}
				c.AddHook(hook)
				f, err := ratelimit.NewInFlight(redisstore.New(c, redisstore.WithPrefix(prefix(t))), 1,
					ratelimit.WithName("export"), ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key")),
					ratelimit.WithKeySecret([]byte("sixteen byte secret!")), ratelimit.WithTimeout(200*time.Millisecond),
					ratelimit.WithErrorHandler(func(*http.Request, error) {}))
				if err != nil {
					t.Fatal(err)
				}
				request := func() (code int, limit string, ran bool) {
					rec := httptest.NewRecorder()
					f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true })).ServeHTTP(rec, exportRequest())
					return rec.Code, rec.Header().Get("X-Ratelimit-Limit"), ran
				}
				wait := func(op string) {
					t.Helper()
					for {
						select {
						case got := <-hook.ran:
							if got == op {
								return
							}
						case <-time.After(10 * time.Second): // a guard against a hang, not a wait for time to pass
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
				if !lose {
					if code, _, _ := request(); code != http.StatusTooManyRequests {
						t.Fatalf("while the late reply is stuck: %d, want 429 (the script ran and took the slot)", code)
					}
					close(hook.hold)
				}
				wait("r") // the late slot given back
				if code, limit, ran := request(); code != http.StatusOK || limit != "1" || !ran {
					t.Fatalf("after the late reply: %d, limit header %q, ran %v; want served with the slot", code, limit, ran)
				}
			})
		}
	}
}

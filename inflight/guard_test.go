package inflight_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// frozenSlots is a shared (not Local) SlotStore over memory slots whose
// Acquire, while frozen, takes its slot and then blocks until thawed, as a
// Redis that ran the script but whose reply is stuck; fail makes Acquire
// answer with a lost reply instead (the slot taken, its ID and an error).
type frozenSlots struct {
	slots    memory.Slots
	frozen   chan struct{} // closed: thawed
	fail     bool
	acquires atomic.Int32
	failing  atomic.Int32 // Releases still to fail, as a client's timeout shorter than a stall fails them
	releases atomic.Int32
	mu       sync.Mutex
	keys     map[string]bool
}

func newFrozenSlots() *frozenSlots {
	return &frozenSlots{frozen: make(chan struct{}), keys: map[string]bool{}}
}

func (s *frozenSlots) thaw() { close(s.frozen) }

func (s *frozenSlots) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	s.acquires.Add(1)
	s.mu.Lock()
	s.keys[key] = true
	s.mu.Unlock()
	slot, err := s.slots.Acquire(context.WithoutCancel(ctx), key, limit, lease)
	if s.fail {
		return inflight.Slot{ID: slot.ID}, errors.New("reply lost")
	}
	<-s.frozen
	return slot, err
}

func (s *frozenSlots) Renew(ctx context.Context, key string, slot inflight.Slot, lease time.Duration) error {
	return s.slots.Renew(ctx, key, slot, lease)
}

func (s *frozenSlots) Release(ctx context.Context, key string, slot inflight.Slot) error {
	s.releases.Add(1)
	if s.failing.Add(-1) >= 0 {
		return errors.New("i/o timeout")
	}
	return s.slots.Release(ctx, key, slot)
}

// running is how many slots of every key are held.
func (s *frozenSlots) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.keys {
		n += s.slots.Running(k)
	}
	return n
}

func newReportLimit(t *testing.T, s inflight.Store, opts ...inflight.Option) *inflight.Limiter {
	t.Helper()
	f, err := inflight.New(s, 2, append([]inflight.Option{inflight.WithName("report"),
		inflight.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), inflight.WithPlainKeys()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// serveSlot sends a request of key through f, and returns its status, whether
// the handler ran, and how long it took.
func serveSlot(f *inflight.Limiter, ctx context.Context, key string) (code int, ran bool, took time.Duration) {
	rec := httptest.NewRecorder()
	start := time.Now()
	f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true })).
		ServeHTTP(rec, keyed(key).WithContext(ctx))
	return rec.Code, ran, time.Since(start)
}

// TestInFlightFrozenStoreCostsTheBudget: a store that does not answer
// costs a request the time budget (the default's, and WithTimeout's), and
// the failure policy answers; the slot the store granted late is given
// back by the goroutine that read the answer.
func TestInFlightFrozenStoreCostsTheBudget(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []inflight.Option
		budget time.Duration
		code   int
		ran    bool
	}{
		{"the default budget, fail open", nil, 100 * time.Millisecond, http.StatusOK, true},
		{"WithTimeout, fail closed", []inflight.Option{inflight.WithTimeout(30 * time.Millisecond), inflight.WithFailClosed()},
			30 * time.Millisecond, http.StatusServiceUnavailable, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFrozenSlots()
				var errs atomic.Int32
				f := newReportLimit(t, s, append(tt.opts, inflight.WithErrorHandler(func(_ *http.Request, err error) {
					if !errors.Is(err, ratelimit.ErrTimeout) {
						t.Errorf("error handler told %v, want ErrTimeout", err)
					}
					errs.Add(1)
				}))...)
				code, ran, took := serveSlot(f, context.Background(), "a")
				if code != tt.code || ran != tt.ran || took != tt.budget {
					t.Fatalf("on a frozen store: %d, handler ran %v, after %v; want %d, %v, after %v",
						code, ran, took, tt.code, tt.ran, tt.budget)
				}
				if s.running() != 1 || errs.Load() != 1 {
					t.Fatalf("%d slots held, %d errors told, before the store answers; want 1 and 1", s.running(), errs.Load())
				}
				s.thaw()
				synctest.Wait()
				if n := s.running(); n != 0 {
					t.Fatalf("%d slots held after the late answer, want 0: it is given back", n)
				}
			})
		})
	}
}

// TestInFlightBreakerSparesTheStore: after the breaker's failures, the
// store is not called until the cool-down ends, and requests cost nothing.
func TestInFlightBreakerSparesTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFrozenSlots()
		var opened atomic.Bool
		f := newReportLimit(t, s, inflight.WithBreaker(ratelimit.NewBreaker(2, time.Hour)),
			inflight.WithErrorHandler(func(*http.Request, error) {}),
			inflight.WithObserver(ratelimit.Observer{BreakerChange: func(name string, st ratelimit.BreakerState) {
				opened.Store(name == "report" && st == ratelimit.BreakerOpen)
			}}))
		var total time.Duration
		for range 10 {
			code, ran, took := serveSlot(f, context.Background(), "a")
			if code != http.StatusOK || !ran {
				t.Fatalf("%d, handler ran %v; want 200 and run: fail open", code, ran)
			}
			total += took
		}
		if n := s.acquires.Load(); n != 2 || !opened.Load() || total != 2*100*time.Millisecond {
			t.Fatalf("%d Acquire calls, %v in all, breaker open told %v; want 2 calls, 2 budgets, told",
				n, total, opened.Load())
		}
		s.thaw()
		synctest.Wait()
	})
}

// TestInFlightFailedAcquireIsGivenBack: an Acquire that took a slot but
// lost its reply names it with its error; the limit gives it back, so the
// next requests are not refused until its lease ends.
func TestInFlightFailedAcquireIsGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFrozenSlots()
		s.fail = true
		f := newReportLimit(t, s, inflight.WithErrorHandler(func(*http.Request, error) {}))
		for range 3 { // more than the limit
			if code, ran, _ := serveSlot(f, context.Background(), "a"); code != http.StatusOK || !ran {
				t.Fatalf("%d, handler ran %v; want 200 and run: fail open", code, ran)
			}
		}
		synctest.Wait()
		if n := s.running(); n != 0 {
			t.Fatalf("%d slots held, want 0", n)
		}
	})
}

// TestInFlightReleaseIsTriedUntilTheStoreAnswers: a slot whose Release
// fails (a client whose read timeout is shorter than the store's stall
// fails every call sent during it) is released again, a little later each
// time, until the store answers, rather than held until its lease ends:
// the slot an Acquire took and whose reply was lost, and the slot of a
// request that ran.
func TestInFlightReleaseIsTriedUntilTheStoreAnswers(t *testing.T) {
	for _, tt := range []struct {
		name        string
		acquireLost bool
	}{
		{"an Acquire's lost reply", true},
		{"a request that ran", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFrozenSlots()
				s.fail = tt.acquireLost
				s.thaw()
				s.failing.Store(3)
				f := newReportLimit(t, s, inflight.WithErrorHandler(func(*http.Request, error) {}))
				if code, ran, _ := serveSlot(f, context.Background(), "a"); code != http.StatusOK || !ran {
					t.Fatalf("%d, handler ran %v; want 200 and run", code, ran)
				}
				time.Sleep(time.Second) // less than the lease, 10 s
				synctest.Wait()
				if n, r := s.running(), s.releases.Load(); n != 0 || r != 4 {
					t.Fatalf("%d slots held after %d Releases, want 0 after 4 (3 failed)", n, r)
				}
			})
		})
	}
}

// cancellingSlots is a Local SlotStore whose Acquire takes a slot, then
// ends the request's context before it answers: the client left while
// the store decided.
type cancellingSlots struct {
	memory.Slots
	cancel context.CancelFunc
	key    string
}

func (s *cancellingSlots) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	s.key = key
	slot, err := s.Slots.Acquire(ctx, key, limit, lease)
	s.cancel()
	return slot, err
}

// TestInFlightGoneClientIsNotServed: a client whose context ended before
// or during Acquire is not served, told to the observer or left a slot.
func TestInFlightGoneClientIsNotServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var decisions atomic.Int32
		observe := inflight.WithObserver(ratelimit.Observer{Decision: func(ratelimit.Decision) { decisions.Add(1) }})
		for _, tt := range []struct {
			name string
			run  func() (code int, ran bool)
		}{
			{"gone before Acquire", func() (int, bool) {
				s := memory.NewSlots()
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				code, ran, _ := serveSlot(newReportLimit(t, s, observe), ctx, "a")
				return code, ran
			}},
			{"gone as a local store answers", func() (int, bool) {
				ctx, cancel := context.WithCancel(context.Background())
				s := &cancellingSlots{cancel: cancel}
				code, ran, _ := serveSlot(newReportLimit(t, s, observe), ctx, "a")
				if n := s.Running(s.key); n != 0 {
					t.Errorf("%d slots held", n)
				}
				return code, ran
			}},
			{"gone while a shared store hangs", func() (int, bool) {
				s := newFrozenSlots()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(10*time.Millisecond, cancel)
				code, ran, took := serveSlot(newReportLimit(t, s, observe), ctx, "a")
				if took != 10*time.Millisecond {
					t.Errorf("answered after %v, want 10ms: when the client left", took)
				}
				s.thaw()
				synctest.Wait()
				if n := s.running(); n != 0 {
					t.Errorf("%d slots held after the store answered, want 0", n)
				}
				return code, ran
			}},
		} {
			if code, ran := tt.run(); ran || code != http.StatusOK {
				t.Errorf("%s: %d (the recorder's default), handler ran %v; want nothing written, not run", tt.name, code, ran)
			}
		}
		if n := decisions.Load(); n != 0 {
			t.Errorf("%d decisions told of clients that went away, want 0", n)
		}
	})
}

// TestInFlightOwnDeadlineIsNotServed: a request whose own deadline passes
// while the store is asked for its slot is answered 503 and does not run,
// under the default failure policy (fail open): it would run without a
// slot, past the limit. The slot the store grants late is given back.
func TestInFlightOwnDeadlineIsNotServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFrozenSlots()
		f := newReportLimit(t, s, inflight.WithErrorHandler(func(*http.Request, error) {}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		code, ran, took := serveSlot(f, ctx, "a")
		if code != http.StatusServiceUnavailable || ran || took != 20*time.Millisecond {
			t.Fatalf("past its own deadline: %d, handler ran %v, after %v; want 503, false, after 20ms", code, ran, took)
		}
		s.thaw()
		synctest.Wait()
		if n := s.running(); n != 0 {
			t.Fatalf("%d slots held after the late answer, want 0: it is given back", n)
		}
	})
}

// slowSlots answers after a delay, as a store across a network does; it
// fails while down.
type slowSlots struct {
	memory.Slots
	delay time.Duration
	down  atomic.Bool
	key   atomic.Pointer[string] // the last key asked for
}

func (s *slowSlots) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	if s.down.Load() {
		return inflight.Slot{}, errors.New("down")
	}
	s.key.Store(&key)
	time.Sleep(s.delay)
	return s.Slots.Acquire(ctx, key, limit, lease)
}

// TestInFlightShortDeadlineProbeClosesTheBreaker: the probe of a half-open
// breaker is a request whose own deadline passes before the store, healthy
// again, answers. The probe's call runs to the time budget all the same
// and closes the breaker; the request is not served and its slot is given
// back.
func TestInFlightShortDeadlineProbeClosesTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &slowSlots{delay: 5 * time.Millisecond}
		b := ratelimit.NewBreaker(1, time.Minute)
		f := newReportLimit(t, s, inflight.WithBreaker(b), inflight.WithErrorHandler(func(*http.Request, error) {}))
		s.down.Store(true)
		serveSlot(f, context.Background(), "a")
		if b.State() != ratelimit.BreakerOpen {
			t.Fatalf("breaker %v after a failure, want open", b.State())
		}
		s.down.Store(false)
		time.Sleep(time.Minute) // the cool-down ends
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if code, ran, _ := serveSlot(f, ctx, "a"); ran || code != http.StatusServiceUnavailable {
			t.Fatalf("the probe's request past its deadline: %d, ran %v; want 503, not run", code, ran)
		}
		synctest.Wait()
		if b.State() != ratelimit.BreakerClosed {
			t.Fatalf("breaker %v after a probe the store answered past its request's deadline, want closed", b.State())
		}
		if n := s.Running(*s.key.Load()); n != 0 {
			t.Fatalf("%d slots held, want 0: the probe's is given back", n)
		}
	})
}

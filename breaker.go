package ratelimit

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is the state of a [Breaker].
type BreakerState int32

const (
	// BreakerClosed: the store is called for every decision.
	BreakerClosed BreakerState = iota
	// BreakerOpen: the store failed too often; decisions go to the failure
	// policy without calling it until the cool-down ends.
	BreakerOpen
	// BreakerHalfOpen: the cool-down ended and one decision at a time probes
	// the store; a success closes the breaker, a failure opens it again.
	BreakerHalfOpen
)

var breakerStates = [...]string{"closed", "open", "half-open"}

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	if s < 0 || int(s) >= len(breakerStates) {
		return fmt.Sprintf("BreakerState(%d)", int32(s))
	}
	return breakerStates[s]
}

// Default settings of the breaker every limiter on a store that is not
// [Local] gets unless [WithBreaker] says otherwise.
const (
	defaultBreakerFailures = 5
	defaultBreakerCoolDown = 500 * time.Millisecond
)

// Breaker is a circuit breaker over a store: after a number of consecutive
// failures it opens, and decisions go straight to the failure policy for a
// cool-down; then one decision at a time probes the store, and the first
// success closes it. An outage so costs one time budget per cool-down,
// not one per request, and the store is not hammered while it recovers.
// A failure counts only while the store answers no other call (none
// within the last time budget): a store that fails in part, such as a
// Redis Cluster master that hangs while the others answer, keeps the
// breaker closed, and the failure policy answers the failing calls alone
// (each still costs its time budget) while the store decides the rest.
// "Answers other calls" is all the limiter sees: where every call in
// flight waits on the failing part (a fixed pool of workers that all came
// to its keys), nothing else is answered for a budget, and the breaker
// opens as for a whole outage; the probes find the store in part again.
// The probe's store call runs to the time budget even if its request ends
// first (its client gone, its own deadline passed), so that it proves the
// store up or down: a request answered past its own end is not served,
// and keeps what the store took.
// Limiters on one store may share a Breaker (pass it to each with
// [WithBreaker]). It is safe for concurrent use by multiple goroutines.
type Breaker struct {
	failures int
	coolDown time.Duration
	err      error // of a bad configuration, reported by WithBreaker

	state       atomic.Int32 // BreakerState
	consecutive atomic.Int64 // failures in a row while closed

	openErr atomic.Pointer[error] // ErrBreakerOpen with the failure that opened it

	mu       sync.Mutex
	openedAt time.Time // the start of the current cool-down
	probing  bool      // a probe is in flight
	onChange []func(BreakerState)
	log      atomic.Pointer[slog.Logger] // a limiter's WithLogger; nil for slog's default (logger.go)
}

// NewBreaker returns a closed Breaker that opens after failures
// consecutive store failures and stays open for coolDown before it
// probes. Failures below 1 or a cool-down that is not positive make
// [WithBreaker], and so [New], fail: like every bad configuration, it is an
// error at construction, never a panic.
func NewBreaker(failures int, coolDown time.Duration) *Breaker {
	b := &Breaker{failures: failures, coolDown: coolDown}
	if failures < 1 || coolDown <= 0 {
		b.err = fmt.Errorf("%w: NewBreaker(%d, %v): want failures >= 1 and a positive cool-down", ErrBadConfig, failures, coolDown)
	}
	return b
}

// State returns the breaker's state.
func (b *Breaker) State() BreakerState { return BreakerState(b.state.Load()) }

// allow reports whether a decision may call the store at now, and whether
// that call is the probe of a half-open breaker, which must be ended with
// success, failure or release.
func (b *Breaker) allow(now time.Time) (ok, probe bool) {
	if b.State() == BreakerClosed {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.State() {
	case BreakerClosed:
		return true, false
	case BreakerOpen:
		if now.Sub(b.openedAt) < b.coolDown {
			return false, false
		}
		b.setLocked(BreakerHalfOpen)
	}
	if b.probing {
		return false, false
	}
	b.probing = true
	return true, true
}

// success records a store call that answered.
func (b *Breaker) success(probe bool) {
	if !probe {
		if b.consecutive.Load() != 0 {
			b.consecutive.Store(0)
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	b.consecutive.Store(0)
	b.setLocked(BreakerClosed)
}

// failure records a store call that failed at now with err.
func (b *Breaker) failure(now time.Time, probe bool, err error) {
	if !probe && b.consecutive.Add(1) < int64(b.failures) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	} else if b.State() != BreakerClosed {
		return // opened already, by a failure of the same burst
	}
	b.openedAt = now
	open := fmt.Errorf("%w: %w", ErrBreakerOpen, err) // made once per opening
	b.openErr.Store(&open)
	b.setLocked(BreakerOpen)
}

// openError is the error of a decision the open breaker kept from the
// store: ErrBreakerOpen, wrapping the failure that opened it (such as a
// refused connection), so that the log says what happened.
func (b *Breaker) openError() error {
	if err := b.openErr.Load(); err != nil {
		return *err
	}
	return ErrBreakerOpen
}

// release ends a probe that neither succeeded nor failed, such as one whose
// client went away, so that the next decision probes instead.
func (b *Breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// notify adds f to the functions told of every state change.
func (b *Breaker) notify(f func(BreakerState)) {
	b.mu.Lock()
	b.onChange = append(b.onChange, f)
	b.mu.Unlock()
}

func (b *Breaker) setLocked(s BreakerState) {
	if b.State() == s {
		return
	}
	was := b.State()
	b.state.Store(int32(s))
	switch {
	case s == BreakerOpen && was == BreakerClosed:
		b.logger().Warn("ratelimit: store failing, breaker open: the failure policy answers", "failures", b.failures, "cool_down", b.coolDown)
	case s == BreakerClosed:
		b.logger().Info("ratelimit: store answers again, breaker closed")
	}
	for _, f := range b.onChange {
		f(s)
	}
}

// WithBreaker sets the circuit breaker in front of the store; limiters on
// one store may share one. The default for a store that is not [Local] is
// a breaker of its own per limiter, NewBreaker(5, 500*time.Millisecond): it
// opens after 5 failures in a row and probes after 500 ms; nil turns it off. Changes of state are logged
// once each by the breaker, with log/slog (see [WithLogger]), and told to [Observer].BreakerChange.
// An in-flight limit (package inflight) takes it too, with the same default.
// A Breaker not made by [NewBreaker] (&Breaker{}) is an error.
func WithBreaker(b *Breaker) Option {
	return func(c *config) error {
		if b != nil && b.err != nil {
			return b.err
		}
		if b != nil && (b.failures < 1 || b.coolDown <= 0) {
			return fmt.Errorf("%w: WithBreaker: a Breaker not made by NewBreaker (a zero Breaker opens never): want NewBreaker(failures, coolDown)", ErrBadConfig)
		}
		c.breaker = b
		return nil
	}
}

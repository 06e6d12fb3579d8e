package inflight

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// Option configures a [Limiter]; pass options to [New]. Most are the
// ratelimit option of the same name, applied to an in-flight limit; a bad
// value makes New fail.
// A nil Option is ignored.
type Option func(*config)

// config is what the options set: the root's options, and the lease.
type config struct {
	opts  []ratelimit.Option
	lease time.Duration
	err   error // WithLease's, the first
}

// defaultLease is how long a slot lives unless renewed.
const defaultLease = 10 * time.Second

// with is an Option that passes o on to the limit.
func with(o ratelimit.Option) Option {
	return func(c *config) { c.opts = append(c.opts, o) }
}

// WithLease sets how long a slot lives unless renewed, from 3 ms to
// ratelimit.MaxPeriod (10 seconds by default); a running request renews it
// every third of that, so that, while the store answers, only the slots
// of an instance that crashed lapse. A renewal that fails (the store
// frozen, unreachable or restarted without its data, or the breaker open)
// is told to the error handler, and the request runs on: its slot lapses
// at its lease's end, another request may take it, and until the requests
// that lost theirs end, up to twice the limit may run (a limit more for
// each time the store loses its data while they run). A slot the store
// says it lost ([ErrSlotLost]: restarted without its data) is its answer,
// not its failure: the breaker stays closed, new requests take the
// store's slots, and the lost one is renewed no more. A local store
// ignores leases.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if d < 3*time.Millisecond || d > ratelimit.MaxPeriod {
			if c.err == nil {
				c.err = fmt.Errorf("%w: inflight.WithLease(%v): want 3ms to %v", ratelimit.ErrBadConfig, d, ratelimit.MaxPeriod)
			}
			return
		}
		c.lease = d
	}
}

// WithName names the limit ("inflight" by default): the first part of its
// store keys, and the Policy of what its observer is told.
func WithName(name string) Option { return with(ratelimit.WithName(name)) }

// WithKeyFunc sets how requests are keyed; the default is the client
// address, ratelimit.KeyByIP().
func WithKeyFunc(f ratelimit.KeyFunc) Option { return with(ratelimit.WithKeyFunc(f)) }

// WithKeySecret sets the secret of the keyed hash that client keys reach
// a store that is not local as, as ratelimit.WithKeySecret does.
func WithKeySecret(secret []byte) Option { return with(ratelimit.WithKeySecret(secret)) }

// WithPlainKeys stores client keys as they are, as ratelimit.WithPlainKeys
// does: for keys that are no secret.
func WithPlainKeys() Option { return with(ratelimit.WithPlainKeys()) }

// WithDenyHandler sets what answers a request that finds every slot of its
// key held, after the headers are set; the default is 429 in text/plain.
func WithDenyHandler(h http.Handler) Option { return with(ratelimit.WithDenyHandler(h)) }

// WithErrorHandler sets what is told of a store call that failed (the
// default logs it at most once a second).
func WithErrorHandler(f func(r *http.Request, err error)) Option {
	return with(ratelimit.WithErrorHandler(f))
}

// WithFailClosed answers 503 when the store fails, instead of letting the
// request run without a slot.
func WithFailClosed() Option { return with(ratelimit.WithFailClosed()) }

// WithFailOpen lets a request run without a slot when the store fails:
// the default, stated.
func WithFailOpen() Option { return with(ratelimit.WithFailOpen()) }

// WithTimeout sets the time budget of each store call, as
// ratelimit.WithTimeout does (100 ms by default on a store that is not
// local, none on a local one).
func WithTimeout(d time.Duration) Option { return with(ratelimit.WithTimeout(d)) }

// WithBreaker sets the circuit breaker in front of the store, which may be
// shared with Limiters of the same store (one of its own by default on a
// store that is not local).
func WithBreaker(b *ratelimit.Breaker) Option { return with(ratelimit.WithBreaker(b)) }

// WithSkip lets a request for which skip reports true run without a slot.
func WithSkip(skip func(*http.Request) bool) Option { return with(ratelimit.WithSkip(skip)) }

// WithDryRun lets a request that finds every slot held run anyway, without
// a slot, logged as would-deny at most once a second.
func WithDryRun() Option { return with(ratelimit.WithDryRun()) }

// WithObserver tells o of each request as a Decision whose Policy is the
// name and whose Limit is zero (a count of running requests is no rate),
// and of the breaker's changes.
func WithObserver(o ratelimit.Observer) Option { return with(ratelimit.WithObserver(o)) }

// WithLogger sets the logger of the default error handler (slog's default
// otherwise).
func WithLogger(logger *slog.Logger) Option { return with(ratelimit.WithLogger(logger)) }

package ratelimit

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Option configures a [Limiter]; pass options to [New]. An option given a
// bad value makes New fail.
type Option func(*Limiter) error

// WithKeyFunc sets how requests are keyed; the default is [KeyByIP]().
func WithKeyFunc(f KeyFunc) Option {
	return func(l *Limiter) error {
		if f == nil {
			return errors.New("ratelimit: WithKeyFunc(nil)")
		}
		l.keyFunc = f
		return nil
	}
}

// WithCost sets how many tokens a request takes, such as 10 for an export
// and 1 for the rest; the default is 1. A cost of 0 lets the request pass
// and reports the budget. A cost below 0 or above the limit's capacity is a
// programming error: the request is answered 500 and the error handler is
// called.
func WithCost(cost func(*http.Request) int) Option {
	return func(l *Limiter) error {
		if cost == nil {
			return errors.New("ratelimit: WithCost(nil)")
		}
		l.cost = cost
		return nil
	}
}

// WithDenyHandler sets the handler that writes the response to a request
// over its budget, after the rate-limit headers and Retry-After are set. It
// must write the status itself (usually 429). The default writes 429 with
// the text/plain body "Too Many Requests"; see also [WithProblemJSON].
func WithDenyHandler(h http.Handler) Option {
	return func(l *Limiter) error {
		if h == nil {
			return errors.New("ratelimit: WithDenyHandler(nil)")
		}
		l.deny = h
		return nil
	}
}

// WithProblemJSON makes the default denial an RFC 9457
// application/problem+json body of problem type quota-exceeded, naming the
// violated policy, as draft-ietf-httpapi-ratelimit-headers describes.
func WithProblemJSON() Option {
	return func(l *Limiter) error { l.deny = problemHandler(l); return nil }
}

// WithErrorHandler sets the function told of store errors (Redis down, a
// cancelled request) and of bad costs. It observes: it must not write the
// response, which the limiter writes (or lets through, failing open). The
// default logs with log/slog at level Error.
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(l *Limiter) error {
		if f == nil {
			return errors.New("ratelimit: WithErrorHandler(nil)")
		}
		l.onError = f
		return nil
	}
}

// WithFailClosed answers 503 Service Unavailable when the store fails. By
// default the limiter fails open: the request passes.
func WithFailClosed() Option {
	return func(l *Limiter) error { l.failClosed = true; return nil }
}

// WithSkip exempts the requests for which skip returns true, such as health
// checks: they pass without taking tokens or getting headers.
func WithSkip(skip func(*http.Request) bool) Option {
	return func(l *Limiter) error {
		if skip == nil {
			return errors.New("ratelimit: WithSkip(nil)")
		}
		l.skip = skip
		return nil
	}
}

// WithName names the limiter: its keys in the store become name + "/" +
// key, so that limiters sharing a store keep separate budgets (a name holds
// no '/', so no key of one limiter is ever another's), and the IETF headers
// and metrics name the policy so. A name is 1 to 64 letters, digits, '.',
// '_' or '-'. Without it, the policy is named "default" and the limiter's
// keys get a namespace of their own: on a [Local] store one no other
// limiter has, on a shared store one made from its limits, so that the
// limiter's instances on every server share it (name limiters that share
// a store with others of the same limits).
func WithName(name string) Option {
	return func(l *Limiter) error {
		if !validName(name) {
			return fmt.Errorf("ratelimit: WithName(%q): want 1 to 64 letters, digits, '.', '_' or '-'", name)
		}
		l.name = name
		return nil
	}
}

// WithHeaders chooses the rate-limit headers; the default is
// [HeadersXRateLimit].
func WithHeaders(style HeaderStyle) Option {
	return func(l *Limiter) error {
		if style < HeadersXRateLimit || style > HeadersNone {
			return fmt.Errorf("ratelimit: WithHeaders(%d): unknown header style", int(style))
		}
		l.headers = style
		return nil
	}
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// WithClock sets the limiter's clock, which times its deny cache, breaker
// and log throttling; the default is time.Now. For tests: give it the same
// clock as the store's (memory.WithClock).
func WithClock(now func() time.Time) Option {
	return func(l *Limiter) error {
		if now == nil {
			return errors.New("ratelimit: WithClock(nil)")
		}
		l.now = now
		return nil
	}
}

package ratelimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Option configures a [Limiter]; pass options to [New]. Options fill a
// configuration that New reads once: they never touch a built Limiter. An
// option given a bad value makes New fail.
// A nil Option is ignored.
type Option func(*config) error

// config is what the options set; New reads it once. Its fields start at
// the defaults, those of a remote store already applied.
type config struct {
	name       string
	keyFunc    KeyFunc
	cost       func(*http.Request) int
	deny       http.Handler // nil: 429 Too Many Requests in text/plain
	onError    func(*http.Request, error)
	failClosed bool
	failOpen   bool // WithFailOpen
	skip       func(*http.Request) bool
	headers    HeaderStyle
	policies   []Policy // from WithPolicy
	timeout    time.Duration
	breaker    *Breaker
	denyKeys   int
	denyMaxAge time.Duration // WithDenyCacheMaxAge
	fallback   Store
	instances  int // WithFallback's or WithInstances'; 0 when neither
	observer   Observer
	dryRun     bool
	keySecret  []byte                // WithKeySecret
	plainKeys  bool                  // WithPlainKeys
	ownKeys    bool                  // WithKeyFunc, or a policy with a KeyFunc of its own
	keyFuncSet bool                  // WithKeyFunc
	blockFor   time.Duration         // WithBlock
	countIf    func(status int) bool // WithCountIf
	logger     *slog.Logger          // WithLogger (logger.go)

	maxDelay time.Duration // WithMaxDelay (shaping.go)

}

// WithKeyFunc sets how requests are keyed; the default is [KeyByIP](). A
// KeyFunc of this package given bad options (such as [KeyByIP] with a
// prefix length out of range) makes [New] fail with its error.
func WithKeyFunc(f KeyFunc) Option {
	return func(c *config) error {
		if f == nil {
			return errors.New("ratelimit: WithKeyFunc(nil)")
		}
		if err := badKeyFuncError(f); err != nil { // keyconfig.go
			return configError("ratelimit: WithKeyFunc: ", err)
		}
		c.keyFunc, c.ownKeys, c.keyFuncSet = f, true, true
		return nil
	}
}

// WithCost sets how many tokens a request takes, such as 10 for an export
// and 1 for the rest; the default is 1. A cost of 0 lets the request pass
// and reports the budget. A cost below 0 or above a policy's capacity is a
// programming error: the request is answered 500 and the error handler is
// told, before the deny cache, the breaker or the store see it.
func WithCost(cost func(*http.Request) int) Option {
	return func(c *config) error {
		if cost == nil {
			return errors.New("ratelimit: WithCost(nil)")
		}
		c.cost = cost
		return nil
	}
}

// WithDenyHandler sets the handler that writes the response to a request
// over its budget, after the rate-limit headers and Retry-After are set. It
// must write the status itself (usually 429) and can read the names of the
// policies that denied the request with [ViolatedPolicies]. The default
// writes 429 with the text/plain body "Too Many Requests"; [ProblemJSON] is
// the RFC 9457 one.
func WithDenyHandler(h http.Handler) Option {
	return func(c *config) error {
		if h == nil {
			return errors.New("ratelimit: WithDenyHandler(nil)")
		}
		c.deny = h
		return nil
	}
}

// WithErrorHandler sets the function told of what the limiter could not
// decide: store failures (Redis down or slow, the breaker open), a
// request's own deadline that passed before the store answered (answered
// 503), and bad costs. It observes; the limiter answers the request itself
// (it lets it through failing open, or writes 503 or 500). The default logs with log/slog at level Error, at most once a
// second (see [WithLogger]).
func WithErrorHandler(f func(r *http.Request, err error)) Option {
	return func(c *config) error {
		if f == nil {
			return errors.New("ratelimit: WithErrorHandler(nil)")
		}
		c.onError = f
		return nil
	}
}

// WithFailClosed answers 503 Service Unavailable when the store fails
// (with [WithFallback], when the fallback fails too). The default on a
// store that is not [Local] is a local fallback (see [New]); on a Local
// store, which answers at once, it is to fail open.
func WithFailClosed() Option {
	return func(c *config) error {
		if c.failOpen {
			return errors.New("ratelimit: WithFailClosed and WithFailOpen both given")
		}
		c.failClosed = true
		return nil
	}
}

// WithFailOpen lets a request pass when the store fails (with
// [WithFallback], when the fallback fails too): an outage of the store
// switches the limits off. Without it, a limiter on a store that is not
// [Local] falls back to a local store of its own (see [New]).
func WithFailOpen() Option {
	return func(c *config) error {
		if c.failClosed {
			return errors.New("ratelimit: WithFailOpen and WithFailClosed both given")
		}
		c.failOpen = true
		return nil
	}
}

// WithSkip exempts the requests for which skip returns true, such as health
// checks: they pass without taking tokens (or, on an in-flight limit, a
// slot) or getting headers.
func WithSkip(skip func(*http.Request) bool) Option {
	return func(c *config) error {
		if skip == nil {
			return errors.New("ratelimit: WithSkip(nil)")
		}
		c.skip = skip
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
	return func(c *config) error {
		if !validName(name) {
			return fmt.Errorf("ratelimit: WithName(%q): want 1 to 64 letters, digits, '.', '_' or '-'", name)
		}
		c.name = name
		return nil
	}
}

// WithHeaders chooses the rate-limit headers; the default is
// [HeadersXRateLimit].
func WithHeaders(style HeaderStyle) Option {
	return func(c *config) error {
		if style < HeadersXRateLimit || style > HeadersNone {
			return fmt.Errorf("ratelimit: WithHeaders(%d): unknown header style", int(style))
		}
		c.headers = style
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

// configError is the error prefix+err's message, with the "ratelimit: "
// that err's message holds dropped, so that the message names the package
// once ("ratelimit: New: invalid limit: ...", not "ratelimit: New:
// ratelimit: invalid limit: ..."); errors.Is and errors.As see err and
// also.
func configError(prefix string, err error, also ...error) error {
	msg := prefix + strings.ReplaceAll(err.Error(), "ratelimit: ", "")
	return &wrappedError{msg: msg, errs: append([]error{err}, also...)}
}

// wrappedError is an error of its own message that wraps errs.
type wrappedError struct {
	msg  string
	errs []error
}

func (e *wrappedError) Error() string   { return e.msg }
func (e *wrappedError) Unwrap() []error { return e.errs }

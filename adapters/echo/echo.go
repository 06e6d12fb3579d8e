// Package echolimit mounts a [ratelimit.Limiter] in an Echo v4 server, and
// lets Echo's own middleware.RateLimiter use any [ratelimit.Store]:
//
//	import echolimit "github.com/ratelimit-go/ratelimit/adapters/echo"
//
//	limiter, _ := ratelimit.New(store, ratelimit.PerMinute(100))
//	e.Use(echolimit.Middleware(limiter))
//
// For Echo v5, use the package of the same name in adapters/echov5.
package echolimit

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelimit-go/ratelimit"
)

// Option configures [Middleware].
// A nil Option is ignored.
type Option func(*config)

type config struct {
	skipper middleware.Skipper
	key     func(echo.Context) (string, error)
}

// WithSkipper exempts the requests for which skipper returns true, after
// Echo's convention; the default skips none.
func WithSkipper(skipper middleware.Skipper) Option {
	return func(c *config) { c.skipper = skipper }
}

// KeyFromContext keys requests with f, which may read what earlier
// middleware set on the echo.Context, such as a user id from c.Get, or be
// one of [KeyByRoute], [IdentifierByIP] and their [Compose]. An error from
// f is answered as the limiter answers a KeyFunc's error. The default is
// the limiter's own KeyFunc ([ratelimit.KeyByIP] unless configured).
func KeyFromContext(f func(c echo.Context) (string, error)) Option {
	return func(c *config) { c.key = f }
}

// Middleware returns an echo.MiddlewareFunc that admits requests through
// l. A denied request gets the limiter's 429 and the next handler does not
// run. It panics on a nil l, at start-up rather than on the first request.
func Middleware(l *ratelimit.Limiter, opts ...Option) echo.MiddlewareFunc {
	if l == nil {
		panic("ratelimit/adapters/echo: Middleware(nil)")
	}
	cfg := config{skipper: middleware.DefaultSkipper}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&cfg)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.skipper != nil && cfg.skipper(c) {
				return next(c)
			}
			var a *ratelimit.Admission
			var admitted bool
			if cfg.key == nil {
				a, admitted = l.Begin(c.Response(), c.Request())
			} else {
				a, admitted = l.BeginWithKeyFunc(c.Response(), c.Request(), func(*http.Request) (string, error) { return cfg.key(c) })
			}
			if !admitted {
				return nil // the limiter wrote the response
			}
			if a == nil {
				return next(c)
			}
			// A counted request (ratelimit.WithCountIf) is settled with the
			// status its response gets (settle).
			returned := false
			var err error
			defer func() { settle(c, a, err, returned) }()
			err = next(c)
			returned = true
			return err
		}
	}
}

// settle settles a with the status of c's response once its handler
// returned err, or panicked (returned is false): the status already sent,
// whatever the error; 500 for a panic before anything was sent (Echo's
// Recover answers it so); 200 for no error and nothing sent (net/http's
// default). For an error with nothing sent yet, Echo's error handler (the
// app's own HTTPErrorHandler, which may answer any error with any status)
// writes the response once the middleware chain has returned: a is settled
// with the status it writes, as it writes it. A response that nothing
// writes is never settled: it keeps its cost, the safe side.
func settle(c echo.Context, a *ratelimit.Admission, err error, returned bool) {
	resp := c.Response()
	switch {
	case resp.Committed:
		a.Done(resp.Status)
	case !returned:
		a.Done(http.StatusInternalServerError)
	case err == nil:
		a.Done(http.StatusOK)
	default:
		resp.Before(func() { a.Done(resp.Status) })
	}
}

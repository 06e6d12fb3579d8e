// Package ginlimit mounts a [ratelimit.Limiter] in a Gin engine:
//
//	import ginlimit "github.com/ratelimit-go/ratelimit/adapters/gin"
//
//	limiter, _ := ratelimit.New(store, ratelimit.PerMinute(100))
//	engine.Use(ginlimit.Middleware(limiter))
//
// A denied request gets the limiter's 429 and the chain is aborted: the
// handlers after the middleware do not run.
package ginlimit

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
)

// Option configures [Middleware].
// A nil Option is ignored.
type Option func(*config)

type config struct {
	key func(*gin.Context) (string, error)
}

// KeyFromContext keys requests with f, which may read what earlier
// handlers set on the gin.Context, such as a user id from c.GetString, or
// be one of [KeyByRoute], [KeyByIP] and their [Compose]. An error from f
// is answered as the limiter answers a KeyFunc's error (400, or the status
// of a [ratelimit.MissingKeyError]). The default is the limiter's own
// KeyFunc ([ratelimit.KeyByIP] unless configured).
func KeyFromContext(f func(c *gin.Context) (string, error)) Option {
	return func(cfg *config) { cfg.key = f }
}

// KeyByFullPath keys requests by gin's matched route: it is
// KeyFromContext([KeyByRoute]()).
func KeyByFullPath() Option {
	return KeyFromContext(KeyByRoute())
}

// Middleware returns a gin.HandlerFunc that admits requests through l and
// aborts the chain of those it denies. It panics on a nil l, at start-up
// rather than on the first request.
func Middleware(l *ratelimit.Limiter, opts ...Option) gin.HandlerFunc {
	if l == nil {
		panic("ratelimit/adapters/gin: Middleware(nil)")
	}
	var cfg config
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&cfg)
	}
	return func(c *gin.Context) {
		var a *ratelimit.Admission
		var admitted bool
		if cfg.key == nil {
			a, admitted = l.Begin(c.Writer, c.Request)
		} else {
			a, admitted = l.BeginWithKeyFunc(c.Writer, c.Request, func(*http.Request) (string, error) { return cfg.key(c) })
		}
		if !admitted {
			c.Abort()
			return
		}
		if a == nil {
			c.Next()
			return
		}
		// A counted request (ratelimit.WithCountIf) is settled with the
		// response's status: the one sent, if any was, else 500 if a
		// handler panicked (gin.Recovery answers it so).
		returned := false
		defer func() {
			status := http.StatusInternalServerError
			if returned || c.Writer.Written() {
				status = c.Writer.Status()
			}
			a.Done(status)
		}()
		c.Next()
		returned = true
	}
}

package echolimit

import (
	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// unmatchedRouteKey is the key of [KeyByRoute] for requests that matched no
// route.
const unmatchedRouteKey = "route:unmatched"

// KeyByRoute keys requests by the route Echo matched, c.Path(), such as
// "route:/items/:id": all clients share one budget per route, whatever the
// id. Requests that matched no route share the one key "route:unmatched",
// never their own path, which the client chooses. Use it with
// [KeyFromContext], or as the IdentifierExtractor of Echo's own
// RateLimiter; [Compose] it with [IdentifierByIP] for a budget per client
// and route.
func KeyByRoute() middleware.Extractor {
	return func(c *echo.Context) (string, error) {
		if p := c.Path(); p != "" {
			return "route:" + p, nil
		}
		return unmatchedRouteKey, nil
	}
}

// IdentifierByIP keys requests by client address with
// [ratelimit.KeyByIP](opts...) on c.Request(), such as "ip:203.0.113.7"
// (IPv6 clients by /64, since one client can use any address of its
// network). It uses the connection's address and believes X-Forwarded-For
// and similar headers only from the proxies named with
// [clientip.TrustProxies]. Use it as the IdentifierExtractor of Echo's own
// RateLimiter, whose default, c.RealIP(), is the connection's address
// unless an IPExtractor is set on the Echo, with one key per IPv6 address.
// It never fails, but with options KeyByIP refuses (a prefix length out of
// range, say), for which it fails every request with a
// [ratelimit.ErrBadConfig].
func IdentifierByIP(opts ...clientip.Option) middleware.Extractor {
	key := ratelimit.KeyByIP(opts...)
	return func(c *echo.Context) (string, error) { return key(c.Request()) }
}

// Compose keys requests by all of extractors at once, joining their keys
// with "|" as [ratelimit.Compose] does: Compose(KeyByRoute(),
// IdentifierByIP()) gives each client a budget per route. It fails if any
// of them fails.
func Compose(extractors ...middleware.Extractor) middleware.Extractor {
	return ratelimit.Compose(extractors...)
}

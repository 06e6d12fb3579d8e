package ginlimit

import (
	"github.com/gin-gonic/gin"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// unmatchedRouteKey is the key of [KeyByRoute] for requests that matched no
// route.
const unmatchedRouteKey = "route:unmatched"

// KeyByRoute keys requests by the route gin matched, c.FullPath(), such as
// "route:/items/:id": all clients share one budget per route, whatever the
// id. Requests that matched no route share the one key "route:unmatched",
// never their own path, which the client chooses. Use it with
// [KeyFromContext]; [Compose] it with [KeyByIP] for a budget per client and
// route.
func KeyByRoute() func(*gin.Context) (string, error) {
	return func(c *gin.Context) (string, error) {
		if p := c.FullPath(); p != "" {
			return "route:" + p, nil
		}
		return unmatchedRouteKey, nil
	}
}

// KeyByIP keys requests by client address with
// [ratelimit.KeyByIP](opts...) on c.Request, such as "ip:203.0.113.7"
// (IPv6 clients by /64): the limiter's default key, for use in [Compose].
// Unlike gin's c.ClientIP(), it uses the connection's address and believes
// X-Forwarded-For and similar headers only from the proxies named with
// [clientip.TrustProxies]. Its only error is ratelimit.KeyByIP's for bad
// options (a prefix length out of range, an invalid trusted prefix): every
// request fails with it, answered 500; [clientip.New] reports them at
// start-up.
func KeyByIP(opts ...clientip.Option) func(*gin.Context) (string, error) {
	key := ratelimit.KeyByIP(opts...)
	return func(c *gin.Context) (string, error) { return key(c.Request) }
}

// KeyByClientIP keys requests by gin's c.ClientIP(), grouped as
// [ratelimit.KeyByIP] groups the connection's address: "ip:203.0.113.7",
// IPv6 clients by /64 ("ip:2001:db8:1:2::/64", since one client can use
// any address of its network), IPv4 inside IPv6 (NAT64, 6to4) as IPv4.
// opts may change the grouping ([clientip.GroupIPv4ByPrefix],
// [clientip.GroupIPv6ByPrefix]); the proxies trusted are gin's, not
// [clientip.TrustProxies]. An address gin cannot give shares
// [clientip.UnknownKey].
//
// Gin trusts every proxy until engine.SetTrustedProxies is called: with
// this option and gin's defaults, every client picks its own key, and so
// a fresh budget per request, by sending X-Forwarded-For or X-Real-IP.
// Call engine.SetTrustedProxies with your proxies' ranges first (or
// SetTrustedProxies(nil) to trust none), or use [KeyByIP], which trusts no
// header unless told with [clientip.TrustProxies].
func KeyByClientIP(opts ...clientip.Option) Option {
	key := ratelimit.KeyByIP(opts...)
	return KeyFromContext(func(c *gin.Context) (string, error) {
		r := *c.Request // the root's grouping, on gin's client address
		r.RemoteAddr = c.ClientIP()
		r.Header = nil // gin has read the headers it trusts
		return key(&r)
	})
}

// Compose keys requests by all of fns at once, joining their keys with "|"
// as [ratelimit.Compose] does: Compose(KeyByRoute(), KeyByIP()) gives each
// client a budget per route. It fails if any of them fails.
func Compose(fns ...func(*gin.Context) (string, error)) func(*gin.Context) (string, error) {
	return ratelimit.Compose(fns...)
}

// Package clientip finds the client address of a request, behind trusted
// proxies or not, and makes its rate-limit key: "ip:203.0.113.7" for IPv4,
// the /64 network "ip:2001:db8:1:2::/64" for IPv6. ratelimit.KeyByIP keys
// HTTP requests with it; [Keys] keys requests of other protocols, such as
// gRPC calls, the same way. By default only the connection's address
// counts: X-Forwarded-For and similar headers, which any client can forge,
// are read only from the proxies [TrustProxies] names.
package clientip

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"

	"github.com/ratelimit-go/ratelimit/internal/headername"
)

// UnknownKey is the key of every request whose client address [Keys]
// cannot know: a connection address it cannot parse (a unix socket that is
// not trusted), a trusted unix socket without a usable header, or a chain
// of more than 64 trusted hops. Such requests share one budget, so
// limiting is never skipped.
const UnknownKey = "ip:unknown"

// maxHops is the most hops of a forwarding header a key walks.
const maxHops = 64

// Option configures [New], and ratelimit.KeyByIP.
// A nil Option is ignored.
type Option func(*config)

// headerKind is how a key reads the header that holds the client address.
type headerKind int

const (
	listHeader      headerKind = iota // X-Forwarded-For: addresses, each proxy appends one
	forwardedHeader                   // RFC 7239 Forwarded: elements, each proxy appends one
	singleHeader                      // one address, such as X-Real-IP
)

type config struct {
	trusted   []netip.Prefix
	trustUnix bool
	header    string // canonical
	kind      headerKind
	v4Bits    int
	v6Bits    int
}

// TrustProxies makes a key believe one header, X-Forwarded-For unless
// [Header] names another, on requests whose connection comes from
// one of the prefixes (your load balancers, say
// netip.MustParsePrefix("10.0.0.0/8")). The client is the right-most
// address of that header that is not in a trusted prefix: addresses to its
// left were written by the client and can be forged. A hop that is not an
// address (garbage, or a hidden Forwarded node such as for=unknown or
// for=_hidden) ends the walk at the trusted hop to its right, the proxy
// that wrote it, whose clients then share its budget; if every hop is
// trusted, the client is the left-most (past 64 hops, [UnknownKey]). No
// other header is
// read: if your proxies set X-Real-IP or Forwarded and pass the client's
// own X-Forwarded-For through, name their header with [Header], or
// the client picks its own key.
func TrustProxies(prefixes ...netip.Prefix) Option {
	return func(c *config) {
		for _, p := range prefixes {
			if p.IsValid() && p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			c.trusted = append(c.trusted, p.Masked())
		}
	}
}

// TrustUnixSocket makes a key treat a request that came in over a unix
// socket (a server on a net.Listen("unix", path) listener, behind nginx's
// proxy_pass http://unix:/path, say) as coming from a trusted proxy, so that
// the header chosen by [Header] gives the client's address. Such
// requests have no IP address of their own: without this option, or when
// the header gives no address, they share [UnknownKey]. Use it only if
// nothing but your proxies can connect to the socket.
func TrustUnixSocket() Option {
	return func(c *config) { c.trustUnix = true }
}

// Header names the one header that trusted proxies (see
// [TrustProxies] and [TrustUnixSocket]) write the client's address to; the
// default is X-Forwarded-For. No other header is read.
//
// X-Forwarded-For and Forwarded (RFC 7239, in all its forms:
// for="[2001:db8::17]:4711";proto=https, for=192.0.2.43, ...) are lists each
// proxy appends to: a key walks them from the right, across their lines,
// to the first address not in a trusted prefix. A hop that is no address
// (Forwarded's "unknown", an obfuscated "_hidden", anything malformed) ends
// the walk at the trusted proxy that wrote it (the hop to its right, or
// the connection; UnknownKey for a unix socket), never at a value to
// its left. A key walks at most 64
// hops: if they are all trusted and more remain, the client cannot be known
// and the request shares [UnknownKey].
//
// Any other header, such as "X-Real-IP", "CF-Connecting-IP" or
// "True-Client-IP", holds one address. Of several (lines, or a comma list)
// the last is used, so a proxy that appends to the client's copy rather
// than replacing it still wins. Missing or malformed, it gives the
// connection's address (UnknownKey for a unix socket).
func Header(name string) Option {
	return func(c *config) {
		c.header = http.CanonicalHeaderKey(name)
		switch c.header {
		case "X-Forwarded-For":
			c.kind = listHeader
		case "Forwarded":
			c.kind = forwardedHeader
		default:
			c.kind = singleHeader
		}
	}
}

// GroupIPv6ByPrefix groups IPv6 clients by the network of their first bits
// bits, one budget per /bits (0 to 128; the default is 64, the usual size
// of one subscriber's network, since one client can use any of its 2^64
// addresses).
func GroupIPv6ByPrefix(bits int) Option { return func(c *config) { c.v6Bits = bits } }

// GroupIPv4ByPrefix groups IPv4 clients by the network of their first bits
// bits, one budget per /bits (0 to 32; the default is 32, one budget per
// address).
func GroupIPv4ByPrefix(bits int) Option { return func(c *config) { c.v4Bits = bits } }

// newConfig returns the configuration of opts, or what is wrong with it.
func newConfig(opts []Option) (config, error) {
	c := config{header: "X-Forwarded-For", kind: listHeader, v4Bits: 32, v6Bits: 64}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&c)
	}
	if c.v4Bits < 0 || c.v4Bits > 32 || c.v6Bits < 0 || c.v6Bits > 128 {
		return c, fmt.Errorf("prefix lengths /%d (IPv4) and /%d (IPv6) out of range", c.v4Bits, c.v6Bits)
	}
	if !headername.Valid(c.header) {
		return c, fmt.Errorf("Header(%q): not a header name", c.header)
	}
	if slices.ContainsFunc(c.trusted, func(p netip.Prefix) bool { return !p.IsValid() }) {
		return c, errors.New("an invalid trusted prefix")
	}
	return c, nil
}

// clientAddr returns the client's address, following trusted proxies, or
// false if it cannot be known.
func (c *config) clientAddr(r *http.Request) (netip.Addr, bool) {
	header := func() []string { return r.Header[c.header] }
	if c.trustUnix && overUnixSocket(r) { // no address to parse: a failed parse allocates
		return c.resolve(netip.Addr{}, false, true, header)
	}
	remote, ok := parseHop(r.RemoteAddr)
	return c.resolve(remote, ok, false, header)
}

// resolve returns the client's address of a connection from remote (ok:
// remote is an address), over a unix socket if unix, following trusted
// proxies through the lines of the header that header returns (read only
// for a trusted connection); false if it cannot be known.
func (c *config) resolve(remote netip.Addr, ok, unix bool, header func() []string) (netip.Addr, bool) {
	var proxy netip.Addr // the trusted connection; invalid for a unix socket
	if !c.trustUnix || !unix {
		if !ok || !c.isTrusted(remote) {
			return remote, ok
		}
		proxy = remote
	}
	lines := header()
	if c.kind != singleHeader {
		return c.rightmostUntrusted(proxy, lines)
	}
	if len(lines) > 0 {
		_, last := lastElement(lines[len(lines)-1])
		if a, ok := parseHop(last); ok {
			return a, true
		}
	}
	return proxy, proxy.IsValid()
}

// overUnixSocket reports whether r came in on a unix socket listener.
func overUnixSocket(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.UnixAddr)
	return ok && a != nil
}

// rightmostUntrusted walks the hops of a forwarding header from the right,
// the last element of the last line first, and returns the first one not
// in a trusted prefix. proxy is the trusted connection (invalid for a unix
// socket). A hop that is not an address ends the walk at the trusted hop
// to its right; more than maxHops trusted hops end it at no address.
func (c *config) rightmostUntrusted(proxy netip.Addr, lines []string) (netip.Addr, bool) {
	parse := parseHop
	if c.kind == forwardedHeader {
		parse = forwardedFor
	}
	last, hops := proxy, 0 // last: the left-most trusted hop so far
	for i := len(lines) - 1; i >= 0; i-- {
		for line := lines[i]; line != ""; {
			var elem string
			line, elem = lastElement(line)
			if hops++; hops > maxHops {
				return netip.Addr{}, false
			}
			a, ok := parse(elem)
			if !ok {
				return last, last.IsValid()
			}
			if !c.isTrusted(a) {
				return a, true
			}
			last = a
		}
	}
	return last, last.IsValid()
}

func (c *config) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (c *config) key(a netip.Addr) string {
	a = embeddedIPv4(a)
	bits, full := c.v6Bits, 128
	if a.Is4() {
		bits, full = c.v4Bits, 32
	}
	var buf [64]byte // one allocation: the string
	b := append(buf[:0], "ip:"...)
	if bits == full {
		return string(a.AppendTo(b))
	}
	p, _ := a.Prefix(bits)
	return string(p.AppendTo(b))
}

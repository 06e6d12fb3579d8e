package ratelimit

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// UnknownAddrKey is the key of every request whose address KeyByIP cannot
// parse, such as one that came in over a unix socket: such requests share
// one budget, so limiting is never skipped.
const UnknownAddrKey = "ip:unknown"

// IPOption configures [KeyByIP].
type IPOption func(*ipConfig)

type ipConfig struct {
	trusted []netip.Prefix
	header  string
	v4Bits  int
	v6Bits  int
}

// TrustProxies makes KeyByIP believe the X-Forwarded-For, Forwarded and
// X-Real-IP headers of requests whose connection comes from one of the
// prefixes (say your load balancers, netip.MustParsePrefix("10.0.0.0/8")).
// The client is then the right-most address of X-Forwarded-For that is not
// in a trusted prefix: addresses to its left were written by the client
// and can be forged.
func TrustProxies(prefixes ...netip.Prefix) IPOption {
	return func(c *ipConfig) { c.trusted = append(c.trusted, prefixes...) }
}

// ClientIPHeader names a header that a trusted proxy sets to the client's
// address, such as "CF-Connecting-IP" or "Fly-Client-IP". It is believed
// only when the connection comes from a prefix given to [TrustProxies].
func ClientIPHeader(name string) IPOption {
	return func(c *ipConfig) { c.header = http.CanonicalHeaderKey(name) }
}

// IPv6Prefix groups IPv6 clients by their first bits bits (0 to 128; the
// default is 64, the usual size of one subscriber's network, since one
// client can use any of its 2^64 addresses).
func IPv6Prefix(bits int) IPOption { return func(c *ipConfig) { c.v6Bits = bits } }

// IPv4Prefix groups IPv4 clients by their first bits bits (0 to 32; the
// default is 32, one key per address).
func IPv4Prefix(bits int) IPOption { return func(c *ipConfig) { c.v4Bits = bits } }

// KeyByIP keys requests by client address: "ip:203.0.113.7", or for IPv6
// the /64 network, "ip:2001:db8:1:2::/64". IPv4-mapped IPv6 addresses
// count as IPv4.
//
// By default it uses the connection's address (r.RemoteAddr) and ignores
// X-Forwarded-For and similar headers, which any client can forge; behind a
// proxy, configure [TrustProxies]. An address it cannot parse falls into
// the one shared budget [UnknownAddrKey]; malformed headers fall back to
// the connection's address. It never fails.
//
// KeyByIP panics if a prefix length is out of range, when it is called at
// start-up, never during a request.
func KeyByIP(opts ...IPOption) KeyFunc {
	c := ipConfig{v4Bits: 32, v6Bits: 64}
	for _, o := range opts {
		o(&c)
	}
	if c.v4Bits < 0 || c.v4Bits > 32 || c.v6Bits < 0 || c.v6Bits > 128 {
		panic(fmt.Sprintf("ratelimit: KeyByIP: prefix lengths /%d (IPv4) and /%d (IPv6) out of range", c.v4Bits, c.v6Bits))
	}
	return func(r *http.Request) (string, error) {
		addr, ok := c.clientAddr(r)
		if !ok {
			return UnknownAddrKey, nil
		}
		return c.key(addr), nil
	}
}

// clientAddr returns the client's address, following trusted proxies.
func (c *ipConfig) clientAddr(r *http.Request) (netip.Addr, bool) {
	remote, ok := parseAddr(r.RemoteAddr, true)
	if !ok || !c.isTrusted(remote) {
		return remote, ok
	}
	if c.header != "" {
		if a, ok := parseAddr(r.Header.Get(c.header), false); ok {
			return a, true
		}
		return remote, true
	}
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		return c.rightmostUntrusted(remote, xff, func(s string) string { return s })
	}
	if fwd := r.Header.Values("Forwarded"); len(fwd) > 0 {
		return c.rightmostUntrusted(remote, fwd, forwardedFor)
	}
	if a, ok := parseAddr(r.Header.Get("X-Real-IP"), false); ok {
		return a, true
	}
	return remote, true
}

// rightmostUntrusted walks the hops of a forwarding header from the right
// and returns the first one not in a trusted prefix. A malformed hop ends
// the walk at the connection's address.
func (c *ipConfig) rightmostUntrusted(remote netip.Addr, lines []string, hop func(string) string) (netip.Addr, bool) {
	client := remote
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		for line != "" {
			var part string
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				part, line = line[j+1:], line[:j]
			} else {
				part, line = line, ""
			}
			a, ok := parseAddr(hop(strings.TrimSpace(part)), false)
			if !ok {
				return remote, true
			}
			if !c.isTrusted(a) {
				return a, true
			}
			client = a // every hop so far is a trusted proxy
		}
	}
	return client, true
}

// forwardedFor returns the for= parameter of one element of an RFC 7239
// Forwarded header, unquoted, or "".
func forwardedFor(element string) string {
	for _, pair := range strings.Split(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(k, "for") {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func (c *ipConfig) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (c *ipConfig) key(a netip.Addr) string {
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

// parseAddr parses an IP address, bare or with a port ("1.2.3.4:80",
// "[::1]:80"), unmapped and without zone. withPort says which form to try
// first: a failed parse allocates its error.
func parseAddr(s string, withPort bool) (netip.Addr, bool) {
	if withPort {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if !withPort {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// Package hostkey names the host a URL reaches with one key for every
// spelling of it, so that a budget per host cannot be multiplied by
// spelling the host differently.
package hostkey

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Canonical returns the key of host, a URL's Host (name or address, with
// an optional port), under scheme. Spellings that reach the same host and
// port share a key:
//
//   - a name is lower case, and a name with non-ASCII letters is mapped
//     as IDNA's lookup does for the spellings that matter here (full-width
//     letters and dots: "ＡＰＩ.example.com" and "api。example.com" are
//     "api.example.com") and its non-ASCII labels written in Punycode
//     ("bücher.example" is "xn--bcher-kva.example"), without the rest of
//     the Unicode tables, which would cost the core module a dependency;
//     %-escapes left in it are decoded;
//   - trailing dots are removed ("api.example.com." is "api.example.com");
//   - an address is written in its shortest standard form: IPv6 in
//     brackets, lower case, zeros compressed ("[0:0::1]" is "[::1]"), an
//     IPv4-mapped IPv6 address as its IPv4 address ("[::ffff:7f00:1]" is
//     "127.0.0.1"), and IPv4 in the forms a C resolver also accepts
//     (inet_aton: hexadecimal "0x7f.1", octal "0177.0.0.1", fewer parts
//     "127.1", one number "2130706433") as a dotted quad;
//   - the port is decimal without leading zeros, and is dropped when it
//     is the scheme's default (80 for http and ws, 443 for https and wss)
//     or empty.
//
// Names are not resolved: two names of one address are two keys. A host
// that is none of these (invalid) is kept, lower case; it cannot be
// dialed under another spelling of a valid host. Canonical never fails.
func Canonical(scheme, host string) string {
	u := url.URL{Host: host}
	name, port := u.Hostname(), u.Port()
	name = canonicalName(name)
	if strings.IndexByte(name, ':') >= 0 {
		name = "[" + name + "]"
	}
	if port = canonicalPort(port); port == "" || port == defaultPort(scheme) {
		return name
	}
	return name + ":" + port
}

// canonicalName returns the canonical form of a host name or address,
// without brackets.
func canonicalName(name string) string {
	if strings.IndexByte(name, '%') >= 0 && strings.IndexByte(name, ':') < 0 {
		if s, err := url.PathUnescape(name); err == nil {
			name = s
		}
	}
	name = strings.TrimPrefix(strings.TrimSuffix(name, "]"), "[")
	if strings.IndexByte(name, ':') >= 0 {
		if a, err := netip.ParseAddr(name); err == nil {
			return strings.ToLower(a.Unmap().String())
		}
		return strings.ToLower(name)
	}
	if !isASCII(name) {
		name = toASCII(name) // idna.go
	}
	name = strings.ToLower(name)
	if t := strings.TrimRight(name, "."); t != "" {
		name = t
	}
	if a, ok := parseIPv4(name); ok {
		return a.String()
	}
	return name
}

// canonicalPort returns port in decimal without leading zeros, or port
// itself when it is not a number.
func canonicalPort(port string) string {
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		return strconv.FormatUint(n, 10)
	}
	return port
}

// defaultPort returns the port that scheme implies when a URL has none.
func defaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// parseIPv4 parses s as inet_aton does: one to four parts separated by
// dots, each decimal, octal (a leading 0) or hexadecimal (0x), the last
// filling the bytes the others leave.
func parseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(4 - i) // bytes the last part fills
		if n >= 1<<(8*rest) {
			return netip.Addr{}, false
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part parses one part of an inet_aton address.
func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if len(p) > 16 {
		return 0, false
	}
	for i := range len(p) { // ParseUint would take signs and underscores
		if c := p[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}

// isASCII reports whether s is ASCII only.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

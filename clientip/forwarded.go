package clientip

import (
	"net/netip"
	"strings"
)

// The parsing of forwarding headers: X-Forwarded-For lists, RFC 7239
// Forwarded elements, and the addresses in them.

// lastElement splits a header line before its last element, at the last
// comma outside a quoted string (proxies write no quotes in
// X-Forwarded-For, and those of clients are left of the hops walked).
func lastElement(line string) (rest, elem string) {
	quoted := false
	for i := len(line) - 1; i >= 0; i-- {
		switch line[i] {
		case '"':
			if !quoted {
				quoted = true
				break
			}
			n := 0 // an odd run of backslashes escapes the quote
			for n < i && line[i-1-n] == '\\' {
				n++
			}
			quoted = n%2 == 1
		case ',':
			if !quoted {
				return line[:i], line[i+1:]
			}
		}
	}
	return "", line
}

// forwardedFor returns the address of the for= parameter of one element of
// a Forwarded header (RFC 7239, section 4), such as
// `for="[2001:db8:cafe::17]:4711";proto=https`. It is false if the element
// has no for= or several, or one that is not an address ("unknown", an
// obfuscated "_hidden"), or bad syntax.
func forwardedFor(elem string) (netip.Addr, bool) {
	var node string
	found := false
	for elem != "" {
		var pair string
		pair, elem = cutPair(elem)
		name, value, ok := strings.Cut(pair, "=")
		if !ok {
			if trimOWS(pair) == "" {
				continue // an empty pair, as in "for=x;;proto=https"
			}
			return netip.Addr{}, false
		}
		if !strings.EqualFold(trimOWS(name), "for") {
			continue
		}
		if found {
			return netip.Addr{}, false // a parameter may occur once
		}
		found, node = true, trimOWS(value)
	}
	if len(node) >= 2 && node[0] == '"' && node[len(node)-1] == '"' {
		node = node[1 : len(node)-1]
	}
	// A node never needs quotes or escapes inside; "unknown" and
	// obfuscated identifiers ("_hidden") are not addresses.
	if node == "" || node[0] == '_' || strings.ContainsAny(node, `"\`) || strings.EqualFold(node, "unknown") {
		return netip.Addr{}, false
	}
	return parseHop(node)
}

// cutPair cuts s at its first semicolon outside a quoted string.
func cutPair(s string) (pair, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ';':
			if !quoted {
				return s[:i], s[i+1:]
			}
		}
	}
	return s, ""
}

// parseHop parses an IP address as r.RemoteAddr and forwarding headers
// write it: bare ("192.0.2.1", "2001:db8::1", with or without a zone),
// with a port ("192.0.2.1:80", "[2001:db8::1]:80"), or in brackets
// ("[2001:db8::1]"). The port may be a number or an RFC 7239 obfuscated
// port ("_p1"). The address is returned unmapped and without its zone.
// Well-formed input allocates nothing.
func parseHop(s string) (netip.Addr, bool) {
	s = trimOWS(s)
	host := s
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || !validPort(s[end+1:]) {
			return netip.Addr{}, false
		}
		host = s[1:end]
	} else if i := strings.IndexByte(s, ':'); i >= 0 && strings.IndexByte(s[i+1:], ':') < 0 {
		if !validPort(s[i:]) { // one colon: an IPv4 address and a port
			return netip.Addr{}, false
		}
		host = s[:i]
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// validPort reports whether s is empty, or a colon and a port: up to five
// digits, or "_" and letters, digits, ".", "_" or "-" (RFC 7239, 6.3).
func validPort(s string) bool {
	p, ok := strings.CutPrefix(s, ":")
	if !ok || p == "" || p == "_" {
		return s == ""
	}
	obfuscated := p[0] == '_'
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if !('0' <= ch && ch <= '9' || obfuscated && ('a' <= ch|0x20 && ch|0x20 <= 'z' || ch == '.' || ch == '_' || ch == '-')) {
			return false
		}
	}
	return obfuscated || len(p) <= 5
}

// trimOWS trims the optional white space of HTTP (spaces and tabs).
func trimOWS(s string) string { return strings.Trim(s, " \t") }

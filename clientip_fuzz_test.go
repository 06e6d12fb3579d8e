package ratelimit_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// checkKey fails unless k is a key KeyByIP can give: "ip:" and an address
// or a network, short.
func checkKey(t *testing.T, what, k string, err error) {
	t.Helper()
	if err != nil || !strings.HasPrefix(k, "ip:") || len(k) > 64 {
		t.Fatalf("%s: key %q, %v", what, k, err)
	}
}

// keyOf is the key of a request from remote with the header name set to
// the lines.
func keyOf(key ratelimit.KeyFunc, remote, name string, lines ...string) (string, error) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = remote
	r.Header[http.CanonicalHeaderKey(name)] = lines
	return key(r)
}

// FuzzKeyByIP: whatever a client writes into the headers, KeyByIP never
// panics, believes no header from an untrusted connection, and never takes
// a hop left of one written by a trusted proxy.
func FuzzKeyByIP(f *testing.F) {
	f.Add("10.0.0.1:80", "1.2.3.4, 10.0.0.2", `for="[2001:db8::1]:4711"`, "5.6.7.8")
	f.Add("[::1]:1", "", "for=192.0.2.60;proto=http", "")
	f.Add("@", ",,,", "for=", "::ffff:1.2.3.4")
	f.Add("10.0.0.1:1", `"`, `for="`, `\`)
	f.Add("10.0.0.1:1", "fe80::1%eth0, [::ffff:10.0.0.2]:1", `for=_x, for=unknown`, "[::1]")
	f.Add("[fe80::1%lo]:1", strings.Repeat("10.0.0.2,", 100), strings.Repeat(`for="\"",`, 50), "1.2.3.4:99999")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	plain := ratelimit.KeyByIP()
	byXFF := ratelimit.KeyByIP(clientip.TrustProxies(trusted...))
	byFwd := ratelimit.KeyByIP(clientip.TrustProxies(trusted...), clientip.Header("Forwarded"))
	byRealIP := ratelimit.KeyByIP(clientip.TrustProxies(trusted...), clientip.Header("X-Real-IP"))
	byUnix := ratelimit.KeyByIP(clientip.TrustUnixSocket())
	f.Fuzz(func(t *testing.T, remote, xff, forwarded, realIP string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		bare, err := plain(r)
		checkKey(t, "KeyByIP()", bare, err)
		r.Header["X-Forwarded-For"] = []string{xff}
		r.Header["Forwarded"] = []string{forwarded}
		r.Header["X-Real-Ip"] = []string{realIP}
		a, perr := netip.ParseAddrPort(remote)
		untrusted := perr == nil && !trusted[0].Contains(a.Addr().Unmap()) && !trusted[1].Contains(a.Addr())
		for _, c := range []struct {
			name    string
			key     ratelimit.KeyFunc
			headers bool // whether it may read them
		}{
			{"KeyByIP()", plain, false},
			{"TrustProxies", byXFF, !untrusted},
			{"Forwarded", byFwd, !untrusted},
			{"X-Real-IP", byRealIP, !untrusted},
			{"TrustUnixSocket, over TCP", byUnix, false},
		} {
			k, err := c.key(r)
			checkKey(t, c.name, k, err)
			if !c.headers && k != bare {
				t.Fatalf("%s: headers from %q changed the key: %q -> %q", c.name, remote, bare, k)
			}
		}
		unix := r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.UnixAddr{Name: "s", Net: "unix"}))
		k, err := byUnix(unix)
		checkKey(t, "KeyByIP(TrustUnixSocket()) over a socket", k, err)

		// A trusted proxy appends the client it saw, 198.51.100.7 or
		// 2001:db8:cafe::17, to whatever the client sent.
		const want, want6 = "ip:198.51.100.7", "ip:2001:db8:cafe::/64"
		for _, c := range []struct {
			key   ratelimit.KeyFunc
			name  string
			lines []string
			want  string
		}{
			{byXFF, "X-Forwarded-For", []string{xff + ", 198.51.100.7"}, want},
			{byXFF, "X-Forwarded-For", []string{xff + ",198.51.100.7, 10.0.0.2"}, want},
			{byXFF, "X-Forwarded-For", []string{xff, "198.51.100.7"}, want},
			{byUnix, "X-Forwarded-For", []string{xff + ", 198.51.100.7"}, want},
			{byFwd, "Forwarded", []string{forwarded + `, for="[2001:db8:cafe::17]:4711";proto=https`}, want6},
			{byFwd, "Forwarded", []string{forwarded + ",for=198.51.100.7", "for=10.0.0.2"}, want},
			{byFwd, "Forwarded", []string{forwarded, "For=198.51.100.7;by=_p"}, want},
			{byRealIP, "X-Real-IP", []string{realIP, "198.51.100.7"}, want},
			{byRealIP, "X-Real-IP", []string{realIP + ", 198.51.100.7"}, want},
		} {
			r := unix.Clone(unix.Context()) // over a socket, for byUnix
			r.RemoteAddr = "10.0.0.1:1"     // from a proxy, for the others
			r.Header = http.Header{http.CanonicalHeaderKey(c.name): c.lines}
			if k, err := c.key(r); k != c.want || err != nil {
				t.Fatalf("%s %q: key %q, %v; want %q, what the proxy appended", c.name, c.lines, k, err, c.want)
			}
		}
	})
}

// FuzzForwarded: Forwarded parsing never panics, reads a node the same
// way quoted or as a plain header, and an element a proxy appends wins.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{
		`for="[2001:db8:cafe::17]"`, `for="[2001:db8::1]:4711"`, "for=192.0.2.43", `for="192.0.2.43:47011"`,
		"FOR=192.0.2.43;Proto=https;BY=203.0.113.60", "for=192.0.2.43, for=198.51.100.17",
		"for=_hidden", `for="_abc:_port"`, "for=unknown", `for="unknown:4711"`, `for="[::1]:_p"`,
		`for=192.0.2.43;ext="a,b;c\"d"`, `for="`, `\"`, ";;,,", "for", "=", `for=""`, `for="[fe80::1%eth0]"`,
	} {
		f.Add(s)
	}
	trusted := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))
	byFwd := ratelimit.KeyByIP(trusted, clientip.Header("Forwarded"))
	byRealIP := ratelimit.KeyByIP(trusted, clientip.Header("X-Real-IP"))
	f.Fuzz(func(t *testing.T, s string) {
		k, err := keyOf(byFwd, "10.0.0.1:1", "Forwarded", s)
		checkKey(t, "Forwarded "+s, k, err)
		if k, _ := keyOf(byFwd, "10.0.0.1:1", "Forwarded", s+", for=198.51.100.7"); k != "ip:198.51.100.7" {
			t.Fatalf("Forwarded %q + the proxy's element: key %q", s, k)
		}
		// A node without quotes, escapes, commas or obfuscation reads the
		// same in a quoted for= as in a single-address header.
		node := strings.Trim(s, " \t")
		if node == "" || strings.ContainsAny(node, "\",\\") || node[0] == '_' || strings.EqualFold(node, "unknown") {
			return
		}
		quoted, _ := keyOf(byFwd, "10.0.0.1:1", "Forwarded", `for="`+node+`"`)
		plain, _ := keyOf(byRealIP, "10.0.0.1:1", "X-Real-IP", node)
		if quoted != plain {
			t.Fatalf("node %q: Forwarded gives %q, X-Real-IP %q", node, quoted, plain)
		}
	})
}

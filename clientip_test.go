package ratelimit_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// proxies is the trusted range of these tests; 10.0.0.1 is the connection.
var proxies = clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))

// header is one header line, in the order a request carries them.
type header struct{ name, value string }

// ipRequest is a request from remote with the header lines hs.
func ipRequest(remote string, hs ...header) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = remote
	for _, h := range hs {
		r.Header.Add(h.name, h.value)
	}
	return r
}

// hops joins n copies of hop with ", ".
func hops(hop string, n int) string {
	return strings.TrimSuffix(strings.Repeat(hop+", ", n), ", ")
}

func xff(v string) header { return header{"X-Forwarded-For", v} }
func fwd(v string) header { return header{"Forwarded", v} }

func TestKeyByIPForwarded(t *testing.T) {
	key := ratelimit.KeyByIP(proxies, clientip.Header("Forwarded"))
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"a quoted IPv6 address without a port is the client", []string{`for="[2001:db8:cafe::17]"`}, "ip:2001:db8:cafe::/64"},
		{"a quoted IPv6 address with a port is the client", []string{`for="[2001:db8:cafe::17]:4711"`}, "ip:2001:db8:cafe::/64"},
		{"an unquoted IPv4 address is the client", []string{"for=192.0.2.43"}, "ip:192.0.2.43"},
		{"a quoted IPv4 address with a port is the client", []string{`for="192.0.2.43:47011"`}, "ip:192.0.2.43"},
		{"an obfuscated port is dropped", []string{`for="192.0.2.43:_p1"`}, "ip:192.0.2.43"},
		{"an IPv4-mapped address counts as IPv4", []string{`for="[::ffff:192.0.2.43]"`}, "ip:192.0.2.43"},
		{"a zone is dropped", []string{`for="[fe80::1%eth0]:80"`}, "ip:fe80::/64"},
		{"parameter names are case-insensitive", []string{"For=192.0.2.43", "FOR=192.0.2.44"}, "ip:192.0.2.44"},
		{"other parameters come in any order", []string{"proto=https;for=192.0.2.43;by=203.0.113.60"}, "ip:192.0.2.43"},
		{"white space around pairs is allowed", []string{" for = 192.0.2.43 ; proto=https "}, "ip:192.0.2.43"},
		{"the right-most untrusted element of a list is the client", []string{"for=198.51.100.1, for=192.0.2.43, for=10.0.0.2"}, "ip:192.0.2.43"},
		{"elements are walked across header lines", []string{"for=198.51.100.1, for=192.0.2.43", "for=10.0.0.3;proto=http", "for=10.0.0.2"}, "ip:192.0.2.43"},
		{"the last line is the nearest proxy's", []string{"for=198.51.100.1", "for=192.0.2.43"}, "ip:192.0.2.43"},
		{"a comma inside a quoted string does not split elements", []string{`for=192.0.2.43;ext="a, for=198.51.100.1"`}, "ip:192.0.2.43"},
		{"an escaped quote does not end a quoted string", []string{`for=192.0.2.43;ext="a\", for=198.51.100.1"`}, "ip:192.0.2.43"},
		{"a client's unterminated quote does not hide the proxy's element", []string{`for="198.51.100.1, for=192.0.2.43`}, "ip:192.0.2.43"},
		{"every element trusted: the left-most", []string{"for=10.0.0.3, for=10.0.0.2"}, "ip:10.0.0.3"},
		{"no header: the connection", nil, "ip:10.0.0.1"},
		{"for=unknown stops at the proxy that wrote it", []string{"for=198.51.100.1, for=unknown, for=10.0.0.2"}, "ip:10.0.0.2"},
		{"an obfuscated node stops at the proxy that wrote it", []string{"for=198.51.100.1, for=_hidden"}, "ip:10.0.0.1"},
		{"an obfuscated node and port stop at the proxy that wrote them", []string{`for=198.51.100.1, for="_abc:_port"`}, "ip:10.0.0.1"},
		{"an unknown node with a port stops the walk", []string{`for=198.51.100.1, for="unknown:4711"`}, "ip:10.0.0.1"},
		{"an element without for= stops the walk", []string{"for=198.51.100.1, proto=https"}, "ip:10.0.0.1"},
		{"for= twice in one element stops the walk", []string{"for=192.0.2.43;for=198.51.100.1"}, "ip:10.0.0.1"},
		{"a malformed element stops the walk", []string{`for=198.51.100.1, for="[2001:db8::1`}, "ip:10.0.0.1"},
		{"an empty element stops the walk", []string{"for=198.51.100.1, , for=10.0.0.2"}, "ip:10.0.0.2"},
		{"a quoted backslash is no node", []string{`for=198.51.100.1, for="192.0.2.\43"`}, "ip:10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hs []header
			for _, l := range tt.lines {
				hs = append(hs, fwd(l))
			}
			r := ipRequest("10.0.0.1:1", append(hs, xff("198.51.100.66"))...)
			if got, err := key(r); got != tt.want || err != nil {
				t.Fatalf("Forwarded %q: key %q, %v; want %q", tt.lines, got, err, tt.want)
			}
		})
	}
}

func TestKeyByIPHeaderChoice(t *testing.T) {
	trusting := []clientip.Option{proxies}
	realIP := []clientip.Option{proxies, clientip.Header("X-Real-IP")}
	tests := []struct {
		name    string
		opts    []clientip.Option
		remote  string
		headers []header
		want    string
	}{
		{"X-Real-IP and Forwarded are not read unless named", trusting, "10.0.0.1:1",
			[]header{{"X-Real-IP", "198.51.100.7"}, fwd("for=198.51.100.8")}, "ip:10.0.0.1"},
		{"a named X-Real-IP wins over the client's X-Forwarded-For", realIP, "10.0.0.1:1",
			[]header{xff("6.6.6.6"), {"X-Real-IP", "198.51.100.7"}}, "ip:198.51.100.7"},
		{"a named Forwarded wins over the client's X-Forwarded-For",
			[]clientip.Option{proxies, clientip.Header("forwarded")}, "10.0.0.1:1",
			[]header{xff("6.6.6.6"), fwd("for=198.51.100.7")}, "ip:198.51.100.7"},
		{"a proxy that appends a line to X-Real-IP wins over the client's line", realIP, "10.0.0.1:1",
			[]header{{"X-Real-IP", "6.6.6.6"}, {"X-Real-IP", "198.51.100.7"}}, "ip:198.51.100.7"},
		{"a proxy that appends to a list in X-Real-IP wins over the client's copy", realIP, "10.0.0.1:1",
			[]header{{"X-Real-IP", "6.6.6.6, 198.51.100.7"}}, "ip:198.51.100.7"},
		{"a named header may carry a port", []clientip.Option{proxies, clientip.Header("cf-connecting-ip")}, "10.0.0.1:1",
			[]header{{"CF-Connecting-IP", "[2001:db8:1:2::9]:443"}}, "ip:2001:db8:1:2::/64"},
		{"a missing named header falls back to the connection",
			[]clientip.Option{proxies, clientip.Header("CF-Connecting-IP")}, "10.0.0.1:1",
			[]header{xff("198.51.100.7")}, "ip:10.0.0.1"},
		{"a malformed named header falls back to the connection", realIP, "10.0.0.1:1",
			[]header{{"X-Real-IP", "198.51.100.7, unknown"}}, "ip:10.0.0.1"},
		{"TrustUnixSocket trusts no TCP connection", []clientip.Option{clientip.TrustUnixSocket()}, "203.0.113.1:1",
			[]header{xff("198.51.100.7")}, "ip:203.0.113.1"},
		{"a named header from an untrusted address is ignored", realIP, "203.0.113.1:1",
			[]header{{"X-Real-IP", "198.51.100.7"}}, "ip:203.0.113.1"},
		{"X-Forwarded-For is walked across lines", trusting, "10.0.0.1:1",
			[]header{xff("6.6.6.6"), xff("198.51.100.7, 10.0.0.2")}, "ip:198.51.100.7"},
		{"X-Forwarded-For hops may carry ports", trusting, "10.0.0.1:1",
			[]header{xff("6.6.6.6, [2001:db8:1:2::9]:4711, 10.0.0.2:80")}, "ip:2001:db8:1:2::/64"},
		{"a malformed hop stops at the proxy that wrote it", trusting, "10.0.0.1:1",
			[]header{xff("198.51.100.7, garbage, 10.0.0.2")}, "ip:10.0.0.2"},
		{"a trailing comma stops at the connection", trusting, "10.0.0.1:1",
			[]header{xff("198.51.100.7,")}, "ip:10.0.0.1"},
		{"an IPv4-mapped trusted prefix trusts IPv4 proxies",
			[]clientip.Option{clientip.TrustProxies(netip.MustParsePrefix("::ffff:10.0.0.0/104"))}, "10.0.0.1:1",
			[]header{xff("198.51.100.7")}, "ip:198.51.100.7"},
		{"an IPv4-mapped connection from a trusted prefix is trusted", []clientip.Option{proxies}, "[::ffff:10.0.0.1]:1",
			[]header{xff("198.51.100.7")}, "ip:198.51.100.7"},
		{"a zoned connection address is trusted without its zone",
			[]clientip.Option{clientip.TrustProxies(netip.MustParsePrefix("fe80::/10"))}, "[fe80::1%eth0]:1",
			[]header{xff("198.51.100.7")}, "ip:198.51.100.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ratelimit.KeyByIP(tt.opts...)(ipRequest(tt.remote, tt.headers...))
			if got != tt.want || err != nil {
				t.Fatalf("key %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// unixClient serves h on a unix socket in a temporary directory, as
// behind nginx's proxy_pass http://unix:/path, and returns a client that
// dials it.
func unixClient(t *testing.T, h http.Handler) *http.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get sends a GET with the header lines hs and returns the status and body.
func get(t *testing.T, c *http.Client, hs ...header) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", "http://proxy/", nil)
	for _, h := range hs {
		r.Header.Add(h.name, h.value)
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestKeyByIPOverUnixSocket(t *testing.T) {
	trustUnix := clientip.TrustUnixSocket()
	tests := []struct {
		name    string
		opts    []clientip.Option
		headers []header
		want    string
	}{
		{"an untrusted socket shares clientip.UnknownKey", nil, []header{xff("198.51.100.7")}, clientip.UnknownKey},
		{"TrustProxies does not trust a socket", []clientip.Option{proxies}, []header{xff("198.51.100.7")}, clientip.UnknownKey},
		{"a trusted socket gives the right-most untrusted X-Forwarded-For hop",
			[]clientip.Option{trustUnix, proxies}, []header{xff("6.6.6.6, 198.51.100.7, 10.0.0.2")}, "ip:198.51.100.7"},
		{"a trusted socket reads the named header only", []clientip.Option{trustUnix, clientip.Header("X-Real-IP")},
			[]header{xff("6.6.6.6"), {"X-Real-IP", "198.51.100.7"}}, "ip:198.51.100.7"},
		{"a trusted socket reads a named Forwarded", []clientip.Option{trustUnix, clientip.Header("Forwarded")},
			[]header{fwd(`for="[2001:db8:cafe::17]:4711";proto=https`)}, "ip:2001:db8:cafe::/64"},
		{"a trusted socket without the header shares clientip.UnknownKey", []clientip.Option{trustUnix}, nil, clientip.UnknownKey},
		{"a trusted socket with a malformed hop shares clientip.UnknownKey",
			[]clientip.Option{trustUnix}, []header{xff("198.51.100.7, unix:")}, clientip.UnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := ratelimit.KeyByIP(tt.opts...)
			c := unixClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				k, _ := key(r)
				io.WriteString(w, k)
			}))
			if _, got := get(t, c, tt.headers...); got != tt.want {
				t.Fatalf("key %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLimiterOverUnixSocket: four clients behind a proxy on a unix
// socket, two requests a minute each.
func TestLimiterOverUnixSocket(t *testing.T) {
	tests := []struct {
		name string
		opts []clientip.Option
		want []int
	}{
		{"an untrusted socket is one budget for all", nil, []int{200, 200, 429, 429}},
		{"a trusted socket is a budget per client", []clientip.Option{clientip.TrustUnixSocket()}, []int{200, 200, 200, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			t.Cleanup(func() { store.Close() })
			ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
			c := unixClient(t, ratelimit.Middleware(store, ratelimit.PerMinute(2), ratelimit.WithKeyFunc(ratelimit.KeyByIP(tt.opts...)))(ok))
			for i, client := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"} {
				if code, _ := get(t, c, xff(client)); code != tt.want[i] {
					t.Fatalf("client %d: status %d, want %d", i+1, code, tt.want[i])
				}
			}
		})
	}
}

func TestKeyByIPLongChains(t *testing.T) {
	key := ratelimit.KeyByIP(proxies)
	fkey := ratelimit.KeyByIP(proxies, clientip.Header("Forwarded"))
	long := strings.Repeat("9", 1<<20)
	tests := []struct {
		name string
		key  ratelimit.KeyFunc
		h    header
		want string
	}{
		{"64 hops are walked", key, xff("198.51.100.7, " + hops("10.0.0.2", 63)), "ip:198.51.100.7"},
		{"past 64 trusted hops the client cannot be known", key, xff("198.51.100.7, " + hops("10.0.0.2", 64)), clientip.UnknownKey},
		{"thousands of trusted hops share the unknown budget", key, xff(hops("10.0.0.2", 10000)), clientip.UnknownKey},
		{"thousands of forged hops left of the client are not read", key, xff(hops("6.6.6.6", 10000) + ", 198.51.100.7"), "ip:198.51.100.7"},
		{"a megabyte hop left of the client is not read", key, xff(long + ", 198.51.100.7"), "ip:198.51.100.7"},
		{"a megabyte hop is malformed", key, xff(long), "ip:10.0.0.1"},
		{"past 64 trusted Forwarded elements the client cannot be known", fkey, fwd(hops("for=10.0.0.2", 65)), clientip.UnknownKey},
		{"a megabyte quoted string left of the client is not read", fkey, fwd(`for="` + long + `", for=198.51.100.7`), "ip:198.51.100.7"},
		{"thousands of quotes left of the client are not read", fkey, fwd(strings.Repeat(`\"`, 10000) + ", for=198.51.100.7"), "ip:198.51.100.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := tt.key(ipRequest("10.0.0.1:1", tt.h)); got != tt.want {
				t.Fatalf("key %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKeyByIPBadOptionsFailNew: a KeyFunc of bad options is an error of
// New wrapping ErrBadConfig, through WithKeyFunc, a policy's Key or
// composed, never a panic nor a limiter that fails every request; given to
// one call (AdmitWithKeyFunc) it fails the request with it (answered 500,
// told to the error handler); clientip.New reports the same options.
func TestKeyByIPBadOptionsFailNew(t *testing.T) {
	tests := []struct {
		name string
		opts []clientip.Option
	}{
		{"an IPv4 prefix longer than 32 bits", []clientip.Option{clientip.GroupIPv4ByPrefix(33)}},
		{"a negative IPv6 prefix", []clientip.Option{clientip.GroupIPv6ByPrefix(-1)}},
		{"an IPv6 prefix longer than 128 bits", []clientip.Option{clientip.GroupIPv6ByPrefix(200)}},
		{"an invalid trusted prefix", []clientip.Option{clientip.TrustProxies(netip.Prefix{})}},
		{"an empty header name", []clientip.Option{clientip.Header("")}},
	}
	store := memory.New()
	defer store.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := clientip.New(tt.opts...); err == nil {
				t.Error("clientip.New: no error")
			}
			key := ratelimit.KeyByIP(tt.opts...)
			if _, err := key(ipRequest("192.0.2.1:1")); !errors.Is(err, ratelimit.ErrBadConfig) || strings.Count(err.Error(), "ratelimit: ") != 1 {
				t.Errorf("the KeyFunc's error %v, want an ErrBadConfig that names the package once", err)
			}
			for _, opt := range []ratelimit.Option{
				ratelimit.WithKeyFunc(key),
				ratelimit.WithPolicy(ratelimit.Policy{Name: "p", Limit: ratelimit.PerMinute(1), Key: key}),
				ratelimit.WithKeyFunc(ratelimit.Compose(ratelimit.KeyByRoute(), key)),
				ratelimit.WithKeyFunc(ratelimit.FirstOf(key, ratelimit.KeyByRoute())),
			} {
				l, err := ratelimit.New(store, ratelimit.PerMinute(1), opt, ratelimit.WithPlainKeys())
				if !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), "KeyByIP") || strings.Count(err.Error(), "ratelimit: ") != 1 || l != nil {
					t.Errorf("New: %v, %v; want no limiter and an ErrBadConfig that names KeyByIP, and the package once", l, err)
				}
			}
			var told error
			l, err := ratelimit.New(store, ratelimit.PerMinute(1),
				ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = err }))
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			if l.AdmitWithKeyFunc(w, ipRequest("192.0.2.1:1"), key) || w.Code != http.StatusInternalServerError || !errors.Is(told, ratelimit.ErrBadConfig) {
				t.Errorf("AdmitWithKeyFunc: status %d, error handler told %v; want 500 and an ErrBadConfig", w.Code, told)
			}
		})
	}
}

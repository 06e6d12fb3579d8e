package clientip_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

func TestKeysKeyAsKeyByIP(t *testing.T) {
	proxies := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48"))
	tests := []struct {
		name   string
		opts   []clientip.Option
		remote string // the connection's address, host:port; "" for a unix socket
		header []string
	}{
		{"an IPv4 client", nil, "192.0.2.1:1234", nil},
		{"an IPv4-mapped client", nil, "[::ffff:192.0.2.1]:1234", nil},
		{"an IPv6 client by /64", nil, "[2001:db8:1:2:3:4:5:6]:1234", nil},
		{"an IPv6 client by /48", []clientip.Option{clientip.GroupIPv6ByPrefix(48)}, "[2001:db8:1:2::1]:1", nil},
		{"an IPv4 client by /24", []clientip.Option{clientip.GroupIPv4ByPrefix(24)}, "192.0.2.77:1", nil},
		{"a forged header without trusted proxies", nil, "192.0.2.1:1", []string{"198.51.100.7"}},
		{"an untrusted connection's header", []clientip.Option{proxies}, "192.0.2.1:1", []string{"198.51.100.7"}},
		{"a trusted proxy's header", []clientip.Option{proxies}, "10.1.2.3:1", []string{"203.0.113.9, 198.51.100.7"}},
		{"a trusted proxy's header of trusted hops", []clientip.Option{proxies}, "10.1.2.3:1", []string{"198.51.100.7, 10.9.9.9", "10.0.0.1"}},
		{"a trusted proxy without a header", []clientip.Option{proxies}, "10.1.2.3:1", nil},
		{"a trusted proxy's bad hop", []clientip.Option{proxies}, "10.1.2.3:1", []string{"198.51.100.7, nonsense"}},
		{"a trusted IPv6 proxy", []clientip.Option{proxies}, "[2001:db8:ffff::1]:1", []string{"198.51.100.7"}},
		{"a Forwarded header", []clientip.Option{proxies, clientip.Header("Forwarded")}, "10.1.2.3:1",
			[]string{`for="[2001:db8:cafe::17]:4711";proto=https`}},
		{"a single-address header", []clientip.Option{proxies, clientip.Header("X-Real-IP")}, "10.1.2.3:1",
			[]string{"198.51.100.1, 198.51.100.7"}},
		{"a malformed single-address header", []clientip.Option{proxies, clientip.Header("X-Real-IP")}, "10.1.2.3:1",
			[]string{"nonsense"}},
		{"an untrusted unix socket", nil, "", []string{"198.51.100.7"}},
		{"a trusted unix socket", []clientip.Option{clientip.TrustUnixSocket()}, "", []string{"198.51.100.7"}},
		{"a trusted unix socket without a header", []clientip.Option{clientip.TrustUnixSocket()}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := clientip.New(tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			var remote netip.Addr
			unix := tt.remote == ""
			if unix {
				r.RemoteAddr = "@"
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.UnixAddr{Name: "/run/app.sock", Net: "unix"}))
			} else {
				remote = netip.MustParseAddrPort(tt.remote).Addr()
			}
			if tt.header != nil {
				r.Header[k.Header()] = tt.header
			}
			want, _ := ratelimit.KeyByIP(tt.opts...)(r)
			for range 2 { // made, then remembered
				if got := k.Key(remote, unix, func() []string { return tt.header }); got != want {
					t.Errorf("Key = %q, KeyByIP's %q", got, want)
				}
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, opt := range []clientip.Option{clientip.GroupIPv4ByPrefix(33), clientip.GroupIPv6ByPrefix(-1),
		clientip.Header(""), clientip.Header("X Real IP"), clientip.Header("X-Real-IP:"),
		clientip.TrustProxies(netip.Prefix{})} {
		if _, err := clientip.New(opt); err == nil {
			t.Error("New: no error")
		}
	}
	for _, name := range []string{"X-Real-IP", "cf-connecting-ip", "Forwarded", "X_Client_IP"} {
		if _, err := clientip.New(clientip.Header(name)); err != nil {
			t.Errorf("New(Header(%q)): %v", name, err)
		}
	}
}

// The key of a client behind a trusted proxy, which names it in
// X-Forwarded-For.
func ExampleKeys() {
	k, err := clientip.New(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		panic(err)
	}
	proxy := netip.MustParseAddr("10.0.0.5")
	fmt.Println(k.Header())
	fmt.Println(k.Key(proxy, false, func() []string { return []string{"203.0.113.7"} }))
	fmt.Println(k.Key(netip.MustParseAddr("2001:db8:1:2::99"), false, nil))
	// Output:
	// X-Forwarded-For
	// ip:203.0.113.7
	// ip:2001:db8:1:2::/64
}

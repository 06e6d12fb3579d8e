package ratelimit_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// The cost of KeyByIP: its allocations and its benchmark.

// TestKeyByIPAllocations: the key string is the one allocation of the
// common cases.
func TestKeyByIPAllocations(t *testing.T) {
	for _, b := range ipBenchmarks {
		want, _ := b.key(b.request())
		if want == clientip.UnknownKey {
			t.Fatalf("%s: key %q", b.name, want)
		}
		t.Run(b.name, func(t *testing.T) {
			key, r := b.key, b.request()
			if n := testing.AllocsPerRun(100, func() { key(r) }); n > 1 {
				t.Fatalf("%v allocations per call, want 1", n)
			}
		})
	}
}

// ipCase is a request for KeyByIP.
type ipCase struct {
	name    string
	key     ratelimit.KeyFunc
	remote  string
	headers []header
	local   net.Addr // the listener's address, if not TCP
}

// ipBenchmarks are the common cases of KeyByIP.
var ipBenchmarks = []ipCase{
	{"an IPv4 connection", ratelimit.KeyByIP(), "203.0.113.7:4711", nil, nil},
	{"an IPv6 connection", ratelimit.KeyByIP(), "[2001:db8:1:2::7]:4711", nil, nil},
	{"X-Forwarded-For through two proxies", ratelimit.KeyByIP(proxies), "10.0.0.1:4711",
		[]header{xff("6.6.6.6, 203.0.113.7, 10.0.0.2")}, nil},
	{"Forwarded through two proxies", ratelimit.KeyByIP(proxies, clientip.Header("Forwarded")), "10.0.0.1:4711",
		[]header{fwd(`for="[2001:db8:1:2::7]:4711";proto=https, for=10.0.0.2`)}, nil},
	{"X-Real-IP", ratelimit.KeyByIP(proxies, clientip.Header("X-Real-IP")), "10.0.0.1:4711",
		[]header{{"X-Real-IP", "203.0.113.7"}}, nil},
	{"a trusted unix socket", ratelimit.KeyByIP(clientip.TrustUnixSocket()), "@",
		[]header{xff("203.0.113.7")}, &net.UnixAddr{Name: "/run/app.sock", Net: "unix"}},
}

func (c *ipCase) request() *http.Request {
	r := ipRequest(c.remote, c.headers...)
	if c.local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, c.local))
	}
	return r
}

func BenchmarkKeyByIP(b *testing.B) {
	for _, bb := range ipBenchmarks {
		b.Run(bb.name, func(b *testing.B) {
			key, r := bb.key, bb.request()
			b.ReportAllocs()
			for b.Loop() {
				key(r)
			}
		})
	}
}

package ratelimit_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// TestKeyByIPKeysIPv4InsideIPv6AsIPv4: addresses that embed an IPv4 host
// are keyed by it, then grouped as IPv4, so that one client behind a NAT64
// gateway cannot spend every IPv4 user's budget, and one 6to4 host does
// not get 65,536 of them.
func TestKeyByIPKeysIPv4InsideIPv6AsIPv4(t *testing.T) {
	tests := []struct {
		name, remote, want string
	}{
		{"NAT64 well-known prefix", "[64:ff9b::1.2.3.4]:1", "ip:1.2.3.4"},
		{"another host behind the same NAT64", "[64:ff9b::5.6.7.8]:1", "ip:5.6.7.8"},
		{"NAT64 local-use /96", "[64:ff9b:1::102:304]:1", "ip:1.2.3.4"},
		{"NAT64 local-use /48 form", "[64:ff9b:1:102:3:400::]:1", "ip:1.2.3.4"},
		{"6to4", "[2002:102:304:1::1]:1", "ip:1.2.3.4"},
		{"another 6to4 /64 of the same host", "[2002:102:304:ffff::1]:1", "ip:1.2.3.4"},
		{"Teredo, whose client address is inverted", "[2001:0:4136:e378:8000:63bf:fefd:fcfb]:1", "ip:1.2.3.4"},
		{"IPv4-mapped", "[::ffff:1.2.3.4]:1", "ip:1.2.3.4"},
		{"IPv4-compatible", "[::1.2.3.4]:1", "ip:1.2.3.4"},
		{"loopback is not IPv4-compatible", "[::1]:1", "ip:::/64"},
		{"other IPv6 is grouped by /64", "[2001:db8:1:2::3]:1", "ip:2001:db8:1:2::/64"},
		{"2001:db8:: is not Teredo", "[2001:db8::1.2.3.4]:1", "ip:2001:db8::/64"},
	}
	key := ratelimit.KeyByIP()
	grouped := ratelimit.KeyByIP(clientip.GroupIPv4ByPrefix(24))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if got, _ := key(r); got != tt.want {
				t.Fatalf("KeyByIP() of %s = %q, want %q", tt.remote, got, tt.want)
			}
			if tt.want == "ip:1.2.3.4" {
				if got, _ := grouped(r); got != "ip:1.2.3.0/24" {
					t.Fatalf("KeyByIP(GroupIPv4ByPrefix(24)) of %s = %q, want it grouped as IPv4, ip:1.2.3.0/24", tt.remote, got)
				}
			}
		})
	}
}

package ratelimit_test

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

func FuzzKeyByIP(f *testing.F) {
	f.Add("10.0.0.1:80", "1.2.3.4, 10.0.0.2", `for="[2001:db8::1]:4711"`, "5.6.7.8")
	f.Add("[::1]:1", "", "for=192.0.2.60;proto=http", "")
	f.Add("@", ",,,", "for=", "::ffff:1.2.3.4")
	trusting := ratelimit.KeyByIP(ratelimit.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")))
	plain := ratelimit.KeyByIP()
	f.Fuzz(func(t *testing.T, remote, xff, forwarded, realIP string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		bare, err := plain(r)
		if err != nil || !strings.HasPrefix(bare, "ip:") || len(bare) > 64 {
			t.Fatalf("KeyByIP() = %q, %v", bare, err)
		}
		r.Header["X-Forwarded-For"] = []string{xff}
		r.Header["Forwarded"] = []string{forwarded}
		r.Header["X-Real-Ip"] = []string{realIP}
		if k, _ := plain(r); k != bare {
			t.Fatalf("headers changed the key of an untrusting KeyByIP: %q -> %q", bare, k)
		}
		k, err := trusting(r)
		if err != nil || !strings.HasPrefix(k, "ip:") || len(k) > 64 {
			t.Fatalf("KeyByIP(TrustProxies) = %q, %v", k, err)
		}
		if a, perr := netip.ParseAddrPort(remote); perr == nil && !netip.MustParsePrefix("10.0.0.0/8").Contains(a.Addr().Unmap()) && a.Addr() != netip.MustParseAddr("::1") {
			if k != bare {
				t.Fatalf("headers from an untrusted address %q changed the key: %q -> %q", remote, bare, k)
			}
		}
	})
}

func FuzzKeyByHeader(f *testing.F) {
	f.Add("abc")
	f.Add("")
	kf := ratelimit.KeyByHeader("X-API-Key")
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-API-Key", v)
		k, err := kf(r)
		if v == "" {
			if err == nil {
				t.Fatal("no error for an empty header")
			}
			return
		}
		if err != nil || k != "x-api-key:"+v {
			t.Fatalf("KeyByHeader = %q, %v", k, err)
		}
	})
}

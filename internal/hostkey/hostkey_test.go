package hostkey

import (
	"net/http"
	"strings"
	"testing"
)

func TestCanonicalSpellingsOfOneHostShareAKey(t *testing.T) {
	for _, c := range []struct {
		name, scheme, want string
		hosts              []string
	}{
		{"case, default port, trailing dot", "https", "api.example.com", []string{
			"api.example.com", "API.Example.COM", "api.example.com:443", "api.example.com.",
			"Api.Example.Com.:443", "api.example.com:0443", "api.example.com:", "api.example.com..",
		}},
		{"http's default port", "http", "api.example.com", []string{
			"api.example.com:80", "API.EXAMPLE.COM.:80", "api.example.com:080",
		}},
		{"a scheme in upper case", "HTTPS", "api.example.com", []string{"api.example.com:443"}},
		{"a port that is not the default stays", "https", "api.example.com:8443", []string{
			"api.example.com:8443", "API.example.com.:08443",
		}},
		{"http on 443 is not https", "http", "api.example.com:443", []string{"api.example.com:443"}},
		{"IDNA: full-width letters and dots, upper case", "https", "api.example.com", []string{
			"ａｐｉ.example.com", "ＡＰＩ.example.com", "api。example。com", "api．example．com．",
		}},
		{"IDNA: a non-ASCII name", "https", "xn--bcher-kva.example", []string{
			"bücher.example", "BÜCHER.example", "xn--bcher-kva.example", "XN--BCHER-KVA.example.",
		}},
		{"%-escapes left in a name", "https", "api.example.com", []string{"%61pi.example.com", "api%2Eexample.com"}},
		{"IPv4 as inet_aton reads it", "http", "127.0.0.1", []string{
			"127.0.0.1", "127.0.0.1.", "127.1", "0x7f.1", "0X7F.0.0.1", "0177.0.0.1", "0177.0.0.01",
			"2130706433", "0x7f000001", "017700000001", "127.0.1", "127.000.000.001", "127.0.0.1:80",
		}},
		{"IPv6 forms", "https", "[::1]", []string{
			"[::1]", "[0:0:0:0:0:0:0:1]", "[0::1]", "[::0001]", "[::1]:443",
		}},
		{"IPv6 in upper case", "https", "[2001:db8::ab]", []string{"[2001:DB8::AB]", "[2001:0db8:0:0::00ab]:443"}},
		{"IPv4-mapped IPv6 is the IPv4 address", "https", "127.0.0.1", []string{
			"[::ffff:127.0.0.1]", "[::FFFF:7f00:1]", "[0:0:0:0:0:ffff:7f00:0001]:443",
		}},
		{"IPv6 with a port", "https", "[::1]:8443", []string{"[::1]:8443", "[0::1]:08443"}},
		{"an IPv6 zone", "http", "[fe80::1%eth0]", []string{"[fe80::1%eth0]", "[FE80::1%ETH0]:80"}},
		{"not IPv4: a part too large", "http", "256.1.1.1", []string{"256.1.1.1"}},
		{"not IPv4: five parts", "http", "1.2.3.4.5", []string{"1.2.3.4.5"}},
		{"not IPv4: 8 in octal", "http", "08.0.0.1", []string{"08.0.0.1"}},
		{"an invalid port is kept", "http", "api.example.com:99999", []string{"api.example.com:99999"}},
		{"no host", "https", "", []string{"", ":443"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, h := range c.hosts {
				if got := Canonical(c.scheme, h); got != c.want {
					t.Errorf("Canonical(%q, %q) = %q, want %q", c.scheme, h, got, c.want)
				}
			}
		})
	}
}

func TestCanonicalKeepsDifferentHostsApart(t *testing.T) {
	keys := map[string]string{}
	for _, h := range []string{
		"api.example.com", "api.example.com:8443", "api.example.org", "example.com",
		"127.0.0.1", "127.0.0.2", "[::1]", "[::2]", "[::127.0.0.1]", "[fe80::1%eth0]", "[fe80::1%eth1]",
		"10.0.0.1", "0.0.0.10", "a.b.c", "abc",
	} {
		k := Canonical("https", h)
		if other, ok := keys[k]; ok {
			t.Errorf("%q and %q share the key %q", h, other, k)
		}
		keys[k] = h
	}
}

// TestCanonicalOfParsedURLs goes through net/http's own parsing: what it
// decodes and what it refuses.
func TestCanonicalOfParsedURLs(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"https://API.example.com.:443/v1", "api.example.com"},
		{"https://%EF%BD%81pi.example.com/v1", "api.example.com"}, // %-encoded full-width a
		{"http://[::ffff:127.0.0.1]:80/", "127.0.0.1"},
		{"http://[fe80::1%25eth0]/", "[fe80::1%eth0]"},
		{"http://user:pw@Example.com:80/", "example.com"},
	} {
		req, err := http.NewRequest("GET", c.url, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if got := Canonical(req.URL.Scheme, req.URL.Host); got != c.want {
			t.Errorf("%s: key %q, want %q", c.url, got, c.want)
		}
	}
	// A %-escape of an ASCII letter is no host net/http would dial.
	if _, err := http.NewRequest("GET", "https://%61pi.example.com/", nil); err == nil {
		t.Error("net/http parses a host with an escaped ASCII letter; Canonical decodes such escapes, but check the spelling")
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"api.example.com:443", "[::1]", "0x7f.1", "ＡＰＩ.example.com.", "%61", "[fe80::1%eth0]:80", "::1", "1.2.3.4.5"} {
		f.Add("https", s)
	}
	f.Fuzz(func(t *testing.T, scheme, host string) {
		k := Canonical(scheme, host)
		if strings.ContainsRune(k, '%') && !strings.HasPrefix(k, "[") {
			return // a name with escapes that do not decode: kept as it is
		}
		if again := Canonical(scheme, k); again != k {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q", host, k, k, again)
		}
	})
}

package ratelimit

import (
	"strings"
	"testing"
)

// FuzzKeyspace: whatever a KeyFunc returns, its client part in the store
// is bounded, is the key itself only when it is an address or route key
// (or its SHA-256 if long), and is otherwise the keyed hash, whose form no
// plain key has.
func FuzzKeyspace(f *testing.F) {
	for _, s := range []string{
		"ip:192.0.2.1", "ip:2001:db8::/64", "ip:unknown", "route:GET /items/{id}|ip:192.0.2.1", "route:unmatched",
		"x-api-key:sk-live-1", "ip:192.0.2.1|x-api-key:k", "ip:192.0.2.01", "route:nopattern", "h:AAAAAAAAAAAAAAAAAAAAAA",
		"", "|", strings.Repeat("ip:1.2.3.4|", 40),
	} {
		f.Add(s)
	}
	k := newKeyspace("api", []byte("0123456789abcdef"), false)
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := k.client(raw)
		if err != nil {
			t.Fatal(err)
		}
		switch plain := isPlainKey(raw); {
		case len(c) > MaxKeyLen:
			t.Fatalf("client part of %d bytes for %q", len(c), raw)
		case plain && len(raw) <= MaxKeyLen && c != raw:
			t.Fatalf("plain key %q became %q", raw, c)
		case plain && strings.HasPrefix(c, hashedKeyTag):
			t.Fatalf("plain key %q has the hashed form %q", raw, c)
		case !plain && (!strings.HasPrefix(c, hashedKeyTag) || len(c) != len(hashedKeyTag)+hashedKeyLen):
			t.Fatalf("key %q reached the store as %q, want the keyed hash", raw, c)
		}
	})
}

package grpclimit

import (
	"context"
	"hash/maphash"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// callKey keys a call from its context and full method, without an
// *http.Request: the fast path of KeyByPeer, KeyByMetadata and KeyByMethod.
// Its keys equal those of their KeyFunc on the request the slow path makes.
type callKey func(ctx context.Context, method string) (string, error)

// peerKey is the callKey of KeyByPeer over k.
func peerKey(k *clientip.Keys) callKey {
	header := strings.ToLower(k.Header()) // metadata names are lower case
	return func(ctx context.Context, _ string) (string, error) {
		var remote netip.Addr
		unix := false
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			remote, unix = peerAddr(p.Addr)
		}
		return k.Key(remote, unix, func() []string {
			return metadata.ValueFromIncomingContext(ctx, header)
		}), nil
	}
}

// peerAddr returns the IP address of a peer, or that it is a unix socket.
func peerAddr(a net.Addr) (netip.Addr, bool) {
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip, false
	case *net.UnixAddr:
		return netip.Addr{}, true
	}
	s := a.String()
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), false
	}
	ip, _ := netip.ParseAddr(s)
	return ip, false
}

// metadataKey is the callKey of KeyByMetadata(name): f's key for the value
// of name, its error for a call without one.
func metadataKey(name string, f ratelimit.KeyFunc) callKey {
	canonical := http.CanonicalHeaderKey(name)
	// The key's prefix and the missing value's error are f's own.
	probe, _ := f(&http.Request{Header: http.Header{canonical: {"v"}}})
	prefix := strings.TrimSuffix(probe, "v")
	_, missing := f(&http.Request{Header: http.Header{}})
	lower := strings.ToLower(canonical)
	keys := newValueKeys(prefix)
	return func(ctx context.Context, _ string) (string, error) {
		vs := metadata.ValueFromIncomingContext(ctx, lower)
		if len(vs) == 0 || vs[0] == "" {
			return "", missing
		}
		return keys.key(vs[0]), nil
	}
}

// methodKey is the callKey of KeyByMethod: the route key of the full
// method, made once per method. Past maxMethods distinct names, a new one
// is a client's invention (a server behind grpc.UnknownServiceHandler sees
// every name a client sends; a server has a few methods): it shares
// ratelimit.UnmatchedRouteKey, as an unmatched HTTP route does.
func methodKey() callKey {
	var keys sync.Map // full method -> key
	var size atomic.Int32
	return func(_ context.Context, method string) (string, error) {
		if method == "" {
			return ratelimit.UnmatchedRouteKey, nil
		}
		if k, ok := keys.Load(method); ok {
			return k.(string), nil
		}
		if size.Add(1) > maxMethods {
			size.Add(-1)
			return ratelimit.UnmatchedRouteKey, nil
		}
		k := "route:" + method
		if _, loaded := keys.LoadOrStore(method, k); loaded {
			size.Add(-1)
		}
		return k, nil
	}
}

// maxMethods bounds the caches of method keys and URLs (a server has a
// few methods).
const maxMethods = 1024

// valueKeys makes the keys prefix + value of metadata values, once for
// the values seen recently, so that a returning client's key allocates
// nothing: a direct-mapped table of immutable entries, read and replaced
// without locks. Values longer than ratelimit.MaxKeyLen are not kept, so
// the table holds at most about 300 KB.
type valueKeys struct {
	prefix string
	seed   maphash.Seed
	slots  [valueKeySlots]atomic.Pointer[valueKey]
}

const valueKeySlots = 1024 // a power of two

type valueKey struct{ value, key string }

func newValueKeys(prefix string) *valueKeys {
	return &valueKeys{prefix: prefix, seed: maphash.MakeSeed()}
}

// key returns prefix + value.
func (c *valueKeys) key(value string) string {
	if len(value) > ratelimit.MaxKeyLen {
		return c.prefix + value
	}
	slot := &c.slots[maphash.String(c.seed, value)&(valueKeySlots-1)]
	if e := slot.Load(); e != nil && e.value == value {
		return e.key
	}
	key := c.prefix + value
	slot.Store(&valueKey{value: key[len(c.prefix):], key: key})
	return key
}

package ratelimit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratelimit-go/ratelimit/clientip"
)

// The key namespace and hashing: how the key a KeyFunc gives becomes the
// key of its budget in the store,
//
//	<namespace>/<client part>
//
// The namespace is the limiter's name, or "name#policy" for a further
// policy ([WithPolicy]); an unnamed limiter's is its own (see namespace).
// Names hold no '/' or '#', so no two namespaces overlap, and the client
// part follows the first '/': the Redis store takes a key's Cluster slot
// from it alone, so a client's policies share a slot.
//
// The client part is an address or route key as it is ("ip:192.0.2.1",
// "route:GET /items/{id}", or several joined with '|'), hashed with SHA-256
// if longer than MaxKeyLen; any other key (a header, the context, your own
// KeyFunc) is "h:" and a keyed hash of it, so that secrets such as API keys
// never reach a shared store, its logs or its backups. A [Local] store, in
// the process's own memory, is given every key as it is, bounded as an
// address is, unless the limiter is given a secret ([WithKeySecret]): the
// keyed hash would cost more than the decision. A bounded key is "sha256:"
// and the hash, and a key that begins with "sha256:" is always hashed, so
// that no key as it is can take a long key's place.

// errNoKeySecret reports a key given at the call ([Limiter.AllowN],
// [Limiter.AdmitWithKeyFunc]) that must be hashed (see [WithKeySecret]) on a
// store that is not [Local], for a limiter given neither WithKeySecret nor
// [WithPlainKeys]: the key never reaches the store, and a request is
// answered 500. It wraps [ErrBadConfig].
var errNoKeySecret = fmt.Errorf("ratelimit: a key from the request (a header, the context) would reach a shared store in plain text: give every instance the same WithKeySecret, or WithPlainKeys: %w", ErrBadConfig)

// errNeedKeySecret is New's error for a limiter on a shared store keyed by
// a KeyFunc of its own without WithKeySecret or WithPlainKeys: its keys may
// come from the request, and would then reach the store as errNoKeySecret
// says.
var errNeedKeySecret = fmt.Errorf("keys of WithKeyFunc (or a Policy's Key) on a shared store need WithKeySecret, the same on every instance, or WithPlainKeys if they hold no secret (such as addresses): %w", ErrBadConfig)

// keyspace makes the store keys of a limiter's policies.
type keyspace struct {
	ns    string     // the limiter's namespace, without the '/'
	mac   *sync.Pool // of *macState under the secret; nil without one
	plain bool       // WithPlainKeys: no key is hashed with the secret
	// joined is set on a shared store: a key kept as it is (asIs) is
	// joined to its namespace on every decision rather than cached
	// (keycache.go). A decision there takes microseconds; the cache would
	// save it an allocation, and cost each of its misses (every key, when
	// more keys are active than it holds) a write to memory that the
	// cores share.
	joined bool
}

// macState is an HMAC-SHA256 under a limiter's secret, with room to feed
// it a key and to read its sum without allocating.
type macState struct {
	h   hash.Hash
	buf [512]byte
	sum [sha256.Size]byte
}

// localSecret is the keyed hash's secret of limiters on a Local store that
// are given none: random, per process, since nothing else sees the keys.
var localSecret = sync.OnceValue(func() []byte {
	b := make([]byte, 32)
	rand.Read(b) // never fails
	return b
})

func newKeyspace(ns string, secret []byte, plain bool) keyspace {
	k := keyspace{ns: ns, plain: plain}
	if secret != nil && !plain {
		k.mac = &sync.Pool{New: func() any { return &macState{h: hmac.New(sha256.New, secret)} }}
	}
	return k
}

// asIs reports whether k keeps client key raw as it is in the store
// without looking at it further (WithPlainKeys, or a Local store without a
// secret): neither too long nor looking like a bound key.
func (k *keyspace) asIs(raw string) bool { return k.plain && fitsAsIs(raw) }

// fitsAsIs reports whether a key that carries no secret may reach the
// store as it is: neither longer than MaxKeyLen nor looking like a bound
// key.
func fitsAsIs(raw string) bool {
	return len(raw) <= MaxKeyLen && !strings.HasPrefix(raw, boundTag)
}

// client returns the client part of client key raw in the store: raw
// itself when it is kept as it is, so callers join it to a namespace
// rather than keep it.
func (k *keyspace) client(raw string) (string, error) {
	if k.plain || isPlainKey(raw) {
		if fitsAsIs(raw) {
			return raw, nil
		}
		return hashKey(raw), nil
	}
	if k.mac == nil {
		return "", errNoKeySecret
	}
	m := k.mac.Get().(*macState)
	m.h.Reset()
	for rest := raw; rest != ""; { // in pieces: no copy of a long key
		n := copy(m.buf[:], rest)
		m.h.Write(m.buf[:n])
		rest = rest[n:]
	}
	m.h.Sum(m.sum[:0])
	var enc [len(hashedKeyTag) + hashedKeyLen]byte
	copy(enc[:], hashedKeyTag)
	base64.RawURLEncoding.Encode(enc[len(hashedKeyTag):], m.sum[:hashedKeyBytes])
	k.mac.Put(m)
	return string(enc[:]), nil
}

// hashKey is the bound form of a key kept as it is but too long, or that
// looks like one: boundTag and the hex of its SHA-256.
func hashKey(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return boundTag + hex.EncodeToString(sum[:])
}

const (
	boundTag       = "sha256:"
	hashedKeyTag   = "h:"
	hashedKeyBytes = 16 // 128 bits of the HMAC
	hashedKeyLen   = 22 // their base64url
)

// isPlainKey reports whether key is made only of the address and route
// keys of KeyByIP and KeyByRoute (and the adapters' route keys), joined
// with '|': such keys carry no secret and stay readable in the store.
func isPlainKey(key string) bool {
	for part := range strings.SplitSeq(key, "|") {
		if !isAddrKey(part) && !isRouteKey(part) {
			return false
		}
	}
	return true
}

// isAddrKey reports whether part is a key of KeyByIP: "ip:" and an address
// or prefix as netip writes it, or clientip.UnknownKey.
func isAddrKey(part string) bool {
	s, ok := strings.CutPrefix(part, "ip:")
	if !ok {
		return false
	}
	if part == clientip.UnknownKey {
		return true
	}
	if strings.IndexByte(s, '/') >= 0 {
		p, err := netip.ParsePrefix(s)
		return err == nil && p.String() == s
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.String() == s
}

// isRouteKey reports whether part is a route key: "route:" and a pattern,
// which holds a '/', or UnmatchedRouteKey. KeyByHeader never writes one
// (see its doc).
func isRouteKey(part string) bool {
	s, ok := strings.CutPrefix(part, "route:")
	return ok && (part == UnmatchedRouteKey || strings.IndexByte(s, '/') >= 0)
}

// unnamed numbers the unnamed limiters of a Local store.
var unnamed atomic.Uint64

// namespace returns the namespace of a limiter named name ("" if unnamed)
// on a store that is local or not, whose policies are described by
// policies. A named limiter's is its name. An unnamed limiter on a Local
// store gets one of its own, "~1", "~2", ...: no other limiter shares its
// budgets. On a shared store, an unnamed limiter's instances (one per
// server) must find the same budgets, so its namespace is "~" and a hash
// of its policies: unnamed limiters of different limits never share a
// budget; two of the same limits on one shared store would, which is why
// limiters on a shared store should be named.
func namespace(name string, local bool, policies string) string {
	switch {
	case name != "":
		return name
	case local:
		return "~" + strconv.FormatUint(unnamed.Add(1), 10)
	}
	sum := sha256.Sum256([]byte(policies))
	return "~" + base64.RawURLEncoding.EncodeToString(sum[:9])
}

// limiterKeyspace makes the keyspace of a limiter on store named name
// ("" if unnamed) with policies, once its options have run: its namespace,
// and the secret of its keyed hash (see [WithKeySecret]).
func limiterKeyspace(store Store, name string, limit Limit, c *config) keyspace {
	local := isLocal(store)
	var policies strings.Builder
	policies.WriteString(limit.String())
	for _, p := range c.policies {
		policies.WriteString("; " + p.Name + ": " + p.Limit.String())
	}
	// On a Local store, keys as they are unless a secret is given: nothing
	// outside the process sees them.
	plain := c.plainKeys || local && c.keySecret == nil
	k := newKeyspace(namespace(name, local, policies.String()), c.keySecret, plain)
	k.joined = !local
	return k
}

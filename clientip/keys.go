package clientip

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"sync/atomic"
)

// Keys makes the keys of client addresses under its options: the same
// keys, trusted proxies and grouping as ratelimit.KeyByIP with the same
// options, for HTTP requests ([Keys.Request]) and for requests of other
// protocols, such as gRPC calls ([Keys.Key]). The keys of recent addresses
// are made once, so that a returning client's key allocates nothing. It is
// safe for concurrent use by multiple goroutines.
type Keys struct {
	c    config
	seed uint64 // random: no client picks another's slot
}

// slots hold the keys of recent addresses, the process's: every Keys's,
// told apart by their maker, so that a Keys (a limiter's, a rule's of a
// rules file of thousands) costs no table of its own.
var slots [keySlots]atomic.Pointer[keyEntry]

const keySlots = 4096 // a power of two

// keyEntry is the key of one client address under the options of by,
// shared read-only.
type keyEntry struct {
	addr netip.Addr
	by   *Keys
	key  string
}

// New returns the Keys of opts; a prefix length out of range, an invalid
// trusted prefix or a header name that is none ("", "X Real IP") is an
// error.
func New(opts ...Option) (*Keys, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("clientip: %s", err)
	}
	return &Keys{c: c, seed: rand.Uint64()}, nil
}

// Header returns the canonical name of the one header that k believes
// from trusted proxies: X-Forwarded-For unless [Header] names another.
func (k *Keys) Header() string { return k.c.header }

// Request returns the key of r's client: its connection's address, or
// behind a trusted proxy the address the proxy names; [UnknownKey] if it
// cannot be known.
func (k *Keys) Request(r *http.Request) string {
	a, ok := k.c.clientAddr(r)
	if !ok {
		return UnknownKey
	}
	return k.key(a)
}

// Key returns the key of a request whose connection comes from remote
// (the zero Addr if it has no IP address, such as a unix socket's), over a
// unix socket if unix, as [Keys.Request] returns it for an HTTP request.
// header returns the lines of the request's [Keys.Header] (nil: it has
// none); Key calls it only for a connection from a trusted proxy, and
// never keeps its lines.
func (k *Keys) Key(remote netip.Addr, unix bool, header func() []string) string {
	remote = remote.Unmap().WithZone("")
	if header == nil {
		header = noLines
	}
	a, ok := k.c.resolve(remote, remote.IsValid(), unix, header)
	if !ok {
		return UnknownKey
	}
	return k.key(a)
}

func noLines() []string { return nil }

// key returns the key of client address a, from the table when a was
// seen recently.
func (k *Keys) key(a netip.Addr) string {
	b := a.As16()
	hi, lo := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	sum := (hi^k.seed)*0x9e3779b97f4a7c15 ^ (lo+k.seed)*0xc2b2ae3d27d4eb4f
	slot := &slots[(sum^sum>>29)&(keySlots-1)]
	if e := slot.Load(); e != nil && e.addr == a && e.by == k {
		return e.key
	}
	key := k.c.key(a)
	slot.Store(&keyEntry{addr: a, by: k, key: key})
	return key
}

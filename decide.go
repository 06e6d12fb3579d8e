package ratelimit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"sync/atomic"
)

// Deciding requests that are no *http.Request, such as gRPC calls,
// without making one: their caller keys them ([IPKey] for client
// addresses) and [Limiter.AdmitKey] walks the pass Admit walks (pass.go).

// DecidesByKey reports whether the limiter decides every request from its
// key and its context alone, so that [Limiter.AdmitKey] decides a request
// exactly as [Limiter.Admit] decides one the limiter keys alike. It does
// unless it was given [WithSkip], [WithCost], [WithCountIf], a
// [WithDenyHandler] other than [ProblemJSON], or a [Policy] with a Key of
// its own: they read or answer the *http.Request.
func (l *Limiter) DecidesByKey() bool {
	if l.skip != nil || l.cost != nil || l.countIf != nil {
		return false
	}
	if _, problem := l.deny.(problemJSON); l.deny != nil && !problem {
		return false
	}
	for i := range l.policies {
		if l.policies[i].key != nil {
			return false
		}
	}
	return true
}

// AdmitKey decides on a request that is no *http.Request, such as a gRPC
// call, keyed key by its caller, as [Limiter.Admit] decides on a request
// that the limiter keys key: the same namespaces, deny cache, time budget,
// breaker, failure policy, shaping, dry run and observer (whose
// Decision.Request is nil, as is the request the error handler is told
// of). It sets on h the rate-limit headers Admit would set on the
// response, and reports whether the caller should go on and, if not, the
// HTTP status Admit would have answered with:
//   - 429 Too Many Requests: over budget; h holds Retry-After;
//   - 503 Service Unavailable: the store failed and the limiter fails closed;
//   - 500 Internal Server Error: a bad configuration, such as a key that
//     needs [WithKeySecret], told to the error handler;
//   - 400 Bad Request: an empty key;
//   - 0: ctx was canceled (the client went away): nothing to answer.
//
// It decides a cost of 1 and skips nothing: on a limiter that does not
// [Limiter.DecidesByKey], make an *http.Request and call Admit.
func (l *Limiter) AdmitKey(ctx context.Context, key string, h http.Header) (ok bool, status int) {
	p := l.getPass()
	defer passes.Put(p)
	var o outcome
	if err := l.keyCall(ctx, key, p); errors.Is(err, ErrBadConfig) {
		o = outcome{end: badCost, err: err, source: FromFailurePolicy}
	} else if err != nil {
		o = outcome{end: badKey, err: err}
	} else {
		o = l.runShaped(ctx, 1, p)
		if l.observer.Decision != nil {
			l.observe(nil, p, o)
		}
	}
	switch o.end {
	case badKey:
		var missing *MissingKeyError
		if errors.As(o.err, &missing) && missing.Status >= 400 && missing.Status <= 499 {
			return false, missing.Status
		}
		return false, http.StatusBadRequest
	case gone:
		return false, 0
	case badCost:
		l.onError(nil, o.err)
		return false, http.StatusInternalServerError
	case undecided:
		l.onError(nil, o.err)
		if l.failClosed {
			return false, http.StatusServiceUnavailable
		}
		return true, http.StatusOK
	}
	if o.err != nil {
		l.onError(nil, o.err) // the fallback store decided
	}
	if !o.res.Allowed && l.dryRun {
		l.logWouldDeny(nil, o.res)
		l.writeHeaders(h, o, false)
		return true, http.StatusOK
	}
	l.writeHeaders(h, o, !o.res.Allowed)
	if !o.res.Allowed {
		return false, http.StatusTooManyRequests
	}
	return true, http.StatusOK
}

// keyCall keys p under every policy with the caller's key, as keyRequest
// keys a request (an empty key is a missing one); a policy with a KeyFunc
// of its own is a bad configuration here.
func (l *Limiter) keyCall(ctx context.Context, key string, p *pass) error {
	if key == "" {
		return &MissingKeyError{What: "key", Status: http.StatusBadRequest}
	}
	for i := range l.policies {
		if pol := &l.policies[i]; pol.key != nil {
			return fmt.Errorf("ratelimit: AdmitKey: policy %q keys requests with a KeyFunc of its own: use Admit: %w", pol.name, ErrBadConfig)
		}
		if err := l.fillTake(ctx, p, i, key); err != nil {
			return err
		}
	}
	if l.planLists != nil {
		p.plan = PlanFrom(ctx)
	}
	return nil
}

// IPKey keys requests that are no *http.Request, such as gRPC calls, by
// client address, as [KeyByIP] with the same options keys HTTP requests:
// the same keys, trusted proxies and grouping. The keys of recent
// addresses are made once, so that a returning client's key allocates
// nothing. It is safe for concurrent use by multiple goroutines.
type IPKey struct {
	c     ipConfig
	seed  uint64 // random: no client picks another's slot
	slots *[ipKeySlots]atomic.Pointer[ipKeyEntry]
}

const ipKeySlots = 1024 // a power of two

// ipKeyEntry is the key of one client address, shared read-only.
type ipKeyEntry struct {
	addr netip.Addr
	key  string
}

// NewIPKey returns the IPKey of opts, the options of [KeyByIP]; a prefix
// length out of range, an invalid trusted prefix or an empty header name
// is an error wrapping [ErrBadConfig].
func NewIPKey(opts ...IPOption) (*IPKey, error) {
	c := ipConfig{header: "X-Forwarded-For", kind: listHeader, v4Bits: 32, v6Bits: 64}
	for _, o := range opts {
		o(&c)
	}
	if c.v4Bits < 0 || c.v4Bits > 32 || c.v6Bits < 0 || c.v6Bits > 128 {
		return nil, fmt.Errorf("ratelimit: NewIPKey: prefix lengths /%d (IPv4) and /%d (IPv6) out of range: %w", c.v4Bits, c.v6Bits, ErrBadConfig)
	}
	if c.header == "" || slices.ContainsFunc(c.trusted, func(p netip.Prefix) bool { return !p.IsValid() }) {
		return nil, fmt.Errorf(`ratelimit: NewIPKey: an invalid trusted prefix or ClientIPHeader(""): %w`, ErrBadConfig)
	}
	return &IPKey{c: c, seed: rand.Uint64(), slots: new([ipKeySlots]atomic.Pointer[ipKeyEntry])}, nil
}

// Header returns the canonical name of the one header that k believes
// from trusted proxies: X-Forwarded-For unless [ClientIPHeader] names
// another.
func (k *IPKey) Header() string { return k.c.header }

// Key returns the key of a request whose connection comes from remote
// (the zero Addr if it has no IP address, such as a unix socket's), over a
// unix socket if unix, as KeyByIP returns it for an HTTP request. header
// returns the lines of the request's [IPKey.Header] (nil: it has none);
// Key calls it only for a connection from a trusted proxy, and never keeps
// its lines.
func (k *IPKey) Key(remote netip.Addr, unix bool, header func() []string) string {
	remote = remote.Unmap().WithZone("")
	var proxy netip.Addr // the trusted connection; invalid for a unix socket
	if !k.c.trustUnix || !unix {
		if !remote.IsValid() {
			return UnknownAddrKey
		}
		if !k.c.isTrusted(remote) {
			return k.key(remote)
		}
		proxy = remote
	}
	var lines []string
	if header != nil {
		lines = header()
	}
	a, ok := proxy, proxy.IsValid()
	if k.c.kind != singleHeader {
		a, ok = k.c.rightmostUntrusted(proxy, lines)
	} else if len(lines) > 0 {
		_, last := lastElement(lines[len(lines)-1])
		if hop, valid := parseHop(last); valid {
			a, ok = hop, true
		}
	}
	if !ok {
		return UnknownAddrKey
	}
	return k.key(a)
}

// key returns the key of client address a, from the table when a was
// seen recently.
func (k *IPKey) key(a netip.Addr) string {
	b := a.As16()
	hi, lo := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	sum := (hi^k.seed)*0x9e3779b97f4a7c15 ^ (lo+k.seed)*0xc2b2ae3d27d4eb4f
	slot := &k.slots[(sum^sum>>29)&(ipKeySlots-1)]
	if e := slot.Load(); e != nil && e.addr == a {
		return e.key
	}
	key := k.c.key(a)
	slot.Store(&ipKeyEntry{addr: a, key: key})
	return key
}

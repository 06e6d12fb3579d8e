package ratelimit

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/internal/headername"
)

// Bounds of keys.
const (
	// MaxKeyLen is the longest client key that reaches a store as it is, after
	// the limiter's namespace; a longer one is replaced by "sha256:" and its
	// hash, so that attacker-chosen headers cannot grow memory or Redis keys
	// without bound. Keys from headers or the context are hashed whatever
	// their length (see [WithKeySecret]).
	MaxKeyLen = 128
	// MinKeySecretLen is the shortest secret [WithKeySecret] takes: 16 bytes,
	// 128 bits.
	MinKeySecretLen = 16
	// UnmatchedRouteKey is the key [KeyByRoute] gives every request that no
	// http.ServeMux pattern matched, such as any request to a limiter that
	// wraps the whole mux: they share one budget, whatever their path.
	UnmatchedRouteKey = "route:unmatched"
)

// KeyFunc returns the key a request is limited under: a client address, an
// API key, a user, a route, or several of them composed. A KeyFunc that
// fails never reaches the store: the request is answered with a client
// error (see [MissingKeyError]).
//
// A KeyFunc of your own prefixes what a client sends, as [KeyByHeader]
// does ("x-tenant:" + the header's value): a client's value returned as it
// is can take the form of another key of the policy, such as an address's
// ("ip:203.0.113.7") with [FirstOf] and [KeyByIP], and spend that budget
// (such a key, whose form is an address's or a route's, is also stored in
// plain text, not as a keyed hash).
type KeyFunc func(r *http.Request) (string, error)

// MissingKeyError reports a request without what a KeyFunc keys on. The
// limiter answers it with Status and the text "missing " + What, which
// names what is missing and never echoes request data.
type MissingKeyError struct {
	What   string // such as "X-API-Key header"
	Status int    // such as 400 (http.StatusBadRequest); anything but a 4xx means 400
}

// Error returns "ratelimit: missing " + What.
func (e *MissingKeyError) Error() string { return "ratelimit: missing " + e.What }

// Is makes errors.Is(err, ErrMissingKey) true.
func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// KeyByIP keys requests by client address: "ip:203.0.113.7", or for IPv6
// the /64 network, "ip:2001:db8:1:2::/64". IPv6 addresses that stand for
// an IPv4 host count as that IPv4 address: IPv4-mapped and -compatible
// ones, NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
// (2001::/32); so do IPv4-mapped trusted prefixes. Zones are dropped.
//
// By default it uses the connection's address (r.RemoteAddr) and ignores
// X-Forwarded-For and similar headers, which any client can forge. Behind
// a proxy, configure [clientip.TrustProxies] (or [clientip.TrustUnixSocket]) and the one
// header your proxies write, [clientip.Header]: believing whichever header
// is present lets clients choose their key, as chi's middleware.RealIP
// warns and "The perils of the 'real' client IP" explains
// (https://adam-p.ca/blog/2022/03/x-forwarded-for/). An address it cannot
// know falls into the one shared budget [clientip.UnknownKey].
//
// A prefix length out of range, an invalid trusted prefix or a header
// name that is none ("", "X Real IP") is bad configuration: [New] reports it (an error wrapping
// [ErrBadConfig]), also within [FirstOf] or [Compose]; given to a single
// call ([Limiter.AdmitWithKeyFunc]), the KeyFunc fails every request with
// it (answered 500, told to the error handler). [clientip.New] reports the
// same options.
func KeyByIP(opts ...clientip.Option) KeyFunc {
	k, err := clientip.New(opts...)
	if err != nil {
		return badKeyFunc(fmt.Errorf("ratelimit: KeyByIP: %s", strings.TrimPrefix(err.Error(), "clientip: ")))
	}
	return func(r *http.Request) (string, error) { return k.Request(r), nil }
}

// KeyByHeader keys requests by the value of a header, such as an API key:
// KeyByHeader("X-API-Key") gives "x-api-key:" + the value, which reaches
// the store only as a keyed hash (see [WithKeySecret]). A request without
// the header gets 400 "missing X-Api-Key header" (the header's canonical
// name); compose with [FirstOf] to fall back to another key instead. A
// header named as the prefix of another key (Ip, Route, User, Echo,
// Header) gives "header:" + that name + ":" + the value ("header:user:"),
// never the form of an address, route, user or header key: with
// FirstOf(KeyByContext(k), KeyByHeader("User")), a client that sends
// "User: alice" does not spend the budget of the signed-in user alice.
// A name that is no header name ("", "X API Key") is bad configuration,
// reported by [New] as a bad prefix of [KeyByIP] is.
func KeyByHeader(name string) KeyFunc {
	if !headername.Valid(name) {
		return badKeyFunc(fmt.Errorf("KeyByHeader(%q): not a header name", name))
	}
	canonical := http.CanonicalHeaderKey(name)
	prefix := strings.ToLower(canonical) + ":"
	switch prefix {
	case "ip:", "route:", "user:", "echo:", "header:": // the prefixes of the other key functions' keys
		prefix = "header:" + prefix
	}
	missing := &MissingKeyError{What: canonical + " header", Status: http.StatusBadRequest}
	return func(r *http.Request) (string, error) {
		v := r.Header.Get(canonical)
		if v == "" {
			return "", missing
		}
		return prefix + v, nil
	}
}

// KeyByContext keys requests by a value that earlier middleware (say,
// authentication) put in the request's context under key: a string, any
// integer type, a fmt.Stringer, or a named type of a string or an integer
// (type UserID int64), such as a user id, giving "user:" + the value,
// which reaches the store only as a keyed hash (see [WithKeySecret]). A
// request without it, or with an empty one, gets 401 "missing user". A key
// no context can hold a value under (nil, a slice, a map) is bad
// configuration, reported by [New].
func KeyByContext(key any) KeyFunc {
	if key == nil || !reflect.ValueOf(key).Comparable() { // struct{ f any }{[]int{1}} too: its ctx.Value would panic
		// context.WithValue refuses such a key: no value is ever under it.
		return badKeyFunc(fmt.Errorf("KeyByContext(%T): a context key must be comparable and not nil", key))
	}
	missing := &MissingKeyError{What: "user", Status: http.StatusUnauthorized}
	return func(r *http.Request) (string, error) {
		var s string
		switch v := r.Context().Value(key).(type) {
		case nil:
		case string:
			s = v
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		case uint64:
			s = strconv.FormatUint(v, 10)
		case fmt.Stringer:
			s = v.String()
		default:
			s = namedValue(reflect.ValueOf(v))
		}
		if s == "" {
			return "", missing
		}
		return "user:" + s, nil
	}
}

// namedValue is the text of a value of a string or integer kind, such as
// a type UserID int64 without a String method; "" for any other kind.
func namedValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return ""
}

// KeyByRoute keys requests by the http.ServeMux pattern that matched them:
// "route:GET /items/{id}" for every /items/ id, so that all clients share
// one budget per route; compose it with KeyByIP for a budget per client and
// route. The limiter must be mounted inside the mux for that,
// mux.Handle(pattern, limiter.Handler(h)): one that wraps the whole mux, or
// runs in Gin or Echo, sees no pattern (r.Pattern is empty), and every
// request then shares [UnmatchedRouteKey]. It never keys on the path, which
// the client chooses (/items/1, /items/2, ... would each get a fresh
// budget). In Gin or Echo, use the adapter's own route key, which reads
// the framework's matched route.
func KeyByRoute() KeyFunc {
	return func(r *http.Request) (string, error) {
		if r.Pattern == "" {
			return UnmatchedRouteKey, nil
		}
		return "route:" + r.Pattern, nil
	}
}

// Compose keys requests by all of fns at once, joining their keys with
// "|": Compose(KeyByRoute(), KeyByIP()) gives each client a budget per
// route. It fails if any of them fails. It composes key functions of any
// request type alike, such as the adapters' over gin.Context or
// echo.Context. No parts, a nil part, or a part given bad options make it
// fail every request with that bad configuration, which [New] reports.
func Compose[F ~func(R) (string, error), R any](fns ...F) F {
	if err := partsError("Compose", len(fns), func(i int) (bool, KeyFunc) { return fns[i] == nil, asKeyFunc(any(fns[i])) }); err != nil {
		if bad, ok := any(failingKey(err)).(F); ok {
			return bad
		}
		return func(R) (string, error) { return "", err }
	}
	return func(r R) (string, error) {
		var b strings.Builder
		for i, f := range fns {
			k, err := f(r)
			if err != nil {
				return "", err
			}
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(k)
		}
		return b.String(), nil
	}
}

// FirstOf keys requests by the first of fns that succeeds:
// FirstOf(KeyByHeader("X-API-Key"), KeyByIP()) limits per API key, and
// clients without one per address. If all fail, it returns the last error.
// No parts, a nil part, or a part given bad options make it fail every
// request with that bad configuration, which [New] reports.
func FirstOf(fns ...KeyFunc) KeyFunc {
	if err := partsError("FirstOf", len(fns), func(i int) (bool, KeyFunc) { return fns[i] == nil, fns[i] }); err != nil {
		return failingKey(err)
	}
	return func(r *http.Request) (string, error) {
		var err error
		for _, f := range fns {
			k, e := f(r)
			if e == nil {
				return k, nil
			}
			err = e
		}
		return "", err
	}
}

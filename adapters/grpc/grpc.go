// Package grpclimit limits the calls of a gRPC server with a [ratelimit.Limiter]:
// unary and stream server interceptors over the limiter's own decision, so
// that a call walks the same pass as an HTTP request (key, deny cache,
// breaker, store within the time budget, failure policy):
//
//	import grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
//
//	limiter, _ := ratelimit.New(store, ratelimit.PerMinute(100))
//	key := grpclimit.KeyByPeer()
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(grpclimit.UnaryServerInterceptor(limiter, key)),
//		grpc.ChainStreamInterceptor(grpclimit.StreamServerInterceptor(limiter, key)))
//
// With [KeyByPeer], [KeyByMetadata] or [KeyByMethod], a call is keyed from
// its context (the peer's address, forwarding metadata from the trusted
// proxies KeyByPeer names, a metadata value, the full method name) and
// decided by ratelimit.Limiter.AdmitKey, through the limiter's one pass,
// without an *http.Request: the interceptor then costs about what the HTTP
// middleware costs, and allocates nothing of its own for a returning
// client's allowed call (the metadata of recurring header values is made
// once and shared). The keys are those of ratelimit.KeyByIP,
// ratelimit.KeyByHeader and ratelimit.KeyByRoute.
//
// Without a key Option, a limiter built without ratelimit.WithKeyFunc
// keys a call by its peer on the fast path too, as KeyByPeer() does
// (ratelimit.Limiter.KeysByAddress).
//
// The slow path makes an HTTP request from the call, for what only a
// request can give: it is taken without a key Option for a limiter with a
// KeyFunc of its own (which then keys the call), and for a limiter that reads the request (ratelimit.WithSkip, WithCost,
// WithCountIf, a deny handler of its own, a Policy with a Key of its own;
// see ratelimit.Limiter.DecidesByKey). On it, RemoteAddr is the peer's
// address, the headers are the call's metadata (so ratelimit.KeyByIP with
// clientip.TrustProxies honours an x-forwarded-for that a trusted proxy
// puts in the metadata, and ratelimit.KeyByHeader("x-api-key") reads a
// metadata value), and the path and pattern are the full method name (so
// ratelimit.KeyByRoute keys by method). On the fast path the limiter's
// error handler and observer are given a nil *http.Request.
//
// A denial is codes.ResourceExhausted with a google.rpc.RetryInfo detail and
// the grpc-retry-pushback-ms trailer, which gRPC clients' retry policies
// honour: both say the limiter's Retry-After, in whole seconds rounded up, so
// a client that waits them is never early. A store failure follows the
// limiter's failure policy: the call goes on when failing open (the default),
// and is answered codes.Unavailable when failing closed. The rate-limit
// headers are sent as metadata (x-ratelimit-limit, ...; none with
// ratelimit.HeadersNone): in the response headers of an admitted call, and
// in the trailers of a denied one, which sends no headers, since a gRPC
// client retries only a call whose server sent none.
package grpclimit

import (
	"context"
	"net/http"
	"sync"

	"google.golang.org/grpc"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
)

// Option configures the interceptors and [Limiter].
// A nil Option is ignored.
type Option func(*config)

type config struct {
	key  ratelimit.KeyFunc // nil: the limiter's own
	fast callKey           // key's, without a request; nil: none
}

// KeyByPeer keys calls by the peer's address, as ratelimit.KeyByIP(opts...)
// keys HTTP requests: IPv6 grouped by /64, forwarding metadata
// (x-forwarded-for, forwarded) believed only from the trusted proxies opts
// name, and with clientip.TrustUnixSocket from a peer on a unix socket.
// Without a key Option, the interceptors key calls as the limiter keys
// requests: by the peer, as KeyByPeer() does, for a limiter built without
// ratelimit.WithKeyFunc; else with its own KeyFunc, on a request made
// from the call (the slow path).
func KeyByPeer(opts ...clientip.Option) Option {
	f := ratelimit.KeyByIP(opts...)
	var fast callKey
	if k, err := clientip.New(opts...); err == nil {
		fast = peerKey(k)
	} // else f fails every call with the error, on the slow path
	return func(c *config) { c.key, c.fast = f, fast }
}

// defaultPeerKey is KeyByPeer()'s key of a call, made once.
var defaultPeerKey = sync.OnceValue(func() callKey {
	k, _ := clientip.New() // no options: no error
	return peerKey(k)
})

// KeyByMetadata keys calls by the metadata value name, such as an API key
// in "x-api-key"; a call without it is answered codes.InvalidArgument. It
// is ratelimit.KeyByHeader(name) over the call's metadata: a name that is
// no header name ("", "x api key") is bad configuration, and every call is
// answered codes.Internal and told to the limiter's error handler.
func KeyByMetadata(name string) Option {
	f := ratelimit.KeyByHeader(name)
	var fast callKey
	if _, err := f(&http.Request{Header: http.Header{http.CanonicalHeaderKey(name): {"v"}}}); err == nil {
		fast = metadataKey(name, f)
	} // else no metadata is ever named so: f fails every call with its bad configuration, on the slow path
	return func(c *config) { c.key, c.fast = f, fast }
}

// KeyByMethod keys calls by their full method name, such as
// "/helloworld.Greeter/SayHello": one budget per method, shared by every
// client. Method names come from the server's registered services, but on
// a server with grpc.UnknownServiceHandler (a proxy), whose stream
// interceptor sees every name a client sends: there the first 1,024
// distinct names keep a budget each and the others share
// ratelimit.UnmatchedRouteKey's: on such a server, limit calls by peer or
// metadata as well (a limiter of their own), or a client gets a budget per
// name it invents, up to 1,024.
func KeyByMethod() Option {
	return func(c *config) { c.key, c.fast = ratelimit.KeyByRoute(), methodKey() }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&c)
	}
	return c
}

// UnaryServerInterceptor returns an interceptor that decides each unary call
// through l before its handler runs. It panics on a nil l, at start-up
// rather than on the first call.
func UnaryServerInterceptor(l *ratelimit.Limiter, opts ...Option) grpc.UnaryServerInterceptor {
	a := newAdmitter(l, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		adm, err := a.admit(ctx, info.FullMethod, grpc.SetHeader, grpc.SetTrailer)
		if err != nil {
			return nil, err
		}
		if adm == nil {
			return handler(ctx, req)
		}
		returned := false
		defer func() { adm.Done(answerStatus(err, returned)) }()
		var resp any
		resp, err = handler(ctx, req)
		returned = true
		return resp, err
	}
}

// StreamServerInterceptor returns an interceptor that decides each stream,
// once, when it opens, through l. It panics on a nil l.
func StreamServerInterceptor(l *ratelimit.Limiter, opts ...Option) grpc.StreamServerInterceptor {
	a := newAdmitter(l, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		setHeader := func(_ context.Context, md metadataMD) error { return ss.SetHeader(md) }
		setTrailer := func(_ context.Context, md metadataMD) error { ss.SetTrailer(md); return nil }
		adm, err := a.admit(ss.Context(), info.FullMethod, setHeader, setTrailer)
		if err != nil {
			return err
		}
		if adm == nil {
			return handler(srv, ss)
		}
		returned := false
		defer func() { adm.Done(answerStatus(err, returned)) }()
		err = handler(srv, ss)
		returned = true
		return err
	}
}

// Limiter adapts a [ratelimit.Limiter] to go-grpc-middleware v2's
// interceptors/ratelimit.Limiter interface, for servers that already chain
// those interceptors. Their interceptor answers every error of Limit with
// codes.ResourceExhausted and a message of its own, so a failing-closed
// limiter's Unavailable reaches the client as ResourceExhausted there; the
// grpc-retry-pushback-ms trailer is still sent. Prefer
// [UnaryServerInterceptor] where you can.
type Limiter struct{ a admitter }

// NewLimiter returns the go-grpc-middleware adapter of l. It panics on a nil l.
func NewLimiter(l *ratelimit.Limiter, opts ...Option) *Limiter {
	return &Limiter{a: newAdmitter(l, opts)}
}

// Limit decides the call of ctx (its method from grpc.Method) through the
// limiter; an error means the call must not go on, and is a gRPC status
// error. go-grpc-middleware calls it before the handler only, so a
// limiter that counts only some answers (ratelimit.WithCountIf) keeps the
// cost of every call here: use [UnaryServerInterceptor] to settle it.
func (l *Limiter) Limit(ctx context.Context) error {
	method, _ := grpc.Method(ctx)
	adm, err := l.a.admit(ctx, method, grpc.SetHeader, grpc.SetTrailer)
	adm.Done(0) // kept
	return err
}

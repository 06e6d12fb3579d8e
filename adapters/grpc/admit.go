package grpclimit

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ratelimit-go/ratelimit"
)

type metadataMD = metadata.MD

// PushbackTrailer is the trailer in which a denial tells gRPC clients'
// retry policies how many milliseconds to wait before trying again.
const PushbackTrailer = "grpc-retry-pushback-ms"

// admitter decides calls through a limiter: on the fast path with a key
// made from the call (ratelimit.Limiter.AdmitKey), else on an HTTP
// request made from the call (request.go).
type admitter struct {
	l    *ratelimit.Limiter
	key  ratelimit.KeyFunc // the slow path's; nil: the limiter's own
	fast callKey           // nil: the slow path
	md   metadataCache
	urls *methodURLs // the slow path's
}

func newAdmitter(l *ratelimit.Limiter, opts []Option) admitter {
	if l == nil {
		panic("ratelimit/adapters/grpc: nil *ratelimit.Limiter")
	}
	c := newConfig(opts)
	a := admitter{l: l, key: c.key, md: newMetadataCache(), urls: new(methodURLs)}
	if c.key == nil && l.KeysByAddress() { // the limiter's default, KeyByIP(): by the peer's address
		c.fast = defaultPeerKey()
	}
	if c.fast != nil && l.DecidesByKey() {
		a.fast = c.fast
	}
	return a
}

// admit decides the call of ctx to method, sends the rate-limit headers
// through setHeader and, on a denial, the pushback through setTrailer. It
// returns nil if the call may go on, else its status error, and the
// admission to settle once the call is answered (nil unless the limiter
// counts only some answers, ratelimit.WithCountIf).
func (a admitter) admit(ctx context.Context, method string,
	setHeader, setTrailer func(context.Context, metadata.MD) error) (*ratelimit.Admission, error) {
	if a.fast == nil {
		return a.admitRequest(ctx, method, setHeader, setTrailer)
	}
	key, err := a.fast(ctx, method)
	if err != nil {
		return nil, keyStatus(err).Err()
	}
	h := make(http.Header, len(headerNames))
	adm, ok, code := a.l.BeginKey(ctx, key, h)
	var st *status.Status
	if !ok {
		st = callStatus(ctx, code, "")
	}
	return adm, a.answer(ctx, st, h, setHeader, setTrailer)
}

// answer sends the rate-limit headers in h of a call that may go on (st
// nil), or the trailers of one that may not, and returns st's error.
func (a admitter) answer(ctx context.Context, st *status.Status, h http.Header,
	setHeader, setTrailer func(context.Context, metadata.MD) error) error {
	if len(h) == 0 && st == nil {
		return nil
	}
	md := a.md.of(h)
	if st == nil {
		if md.md != nil {
			_ = setHeader(ctx, md.md) // fails only once headers were sent: nothing to add then
		}
		return nil
	}
	// A denial sends no headers, only trailers: a client's retry policy
	// retries only a call whose server sent no headers (gRPC's A6).
	trailer := md.md
	if st.Code() == codes.ResourceExhausted && md.pushback != nil {
		trailer = md.pushback
		if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(md.wait)}); err == nil {
			st = d
		}
	}
	if trailer != nil {
		_ = setTrailer(ctx, trailer)
	}
	return st.Err()
}

// callStatus is the gRPC status of the HTTP status code that the limiter
// answered a call that may not go on with, and the start of its body.
func callStatus(ctx context.Context, code int, body string) *status.Status {
	if body == "" {
		body = http.StatusText(code)
	}
	switch code {
	case http.StatusTooManyRequests:
		return status.New(codes.ResourceExhausted, "rate limit exceeded")
	case http.StatusServiceUnavailable:
		if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
			return status.FromContextError(err) // the call's own deadline passed before the store answered
		}
		return status.New(codes.Unavailable, "rate limiter unavailable")
	case http.StatusUnauthorized:
		return status.New(codes.Unauthenticated, body)
	case http.StatusForbidden:
		return status.New(codes.PermissionDenied, body)
	case 0:
		// Nothing was written: the client went away before the store answered.
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err)
		}
		return status.New(codes.Canceled, "call canceled")
	}
	if code >= 400 && code < 500 {
		return status.New(codes.InvalidArgument, body)
	}
	return status.New(codes.Internal, "rate limiter error")
}

// keyStatus is the status of a call the fast path could not key, as the
// limiter answers a request its KeyFunc could not key: the status and text
// of a ratelimit.MissingKeyError, else 400.
func keyStatus(err error) *status.Status {
	var missing *ratelimit.MissingKeyError
	if errors.As(err, &missing) {
		code := missing.Status
		if code < 400 || code > 499 {
			code = http.StatusBadRequest
		}
		return callStatus(context.Background(), code, "missing "+missing.What)
	}
	return callStatus(context.Background(), http.StatusBadRequest, "")
}

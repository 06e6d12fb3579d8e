package grpc

import (
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ratelimit-go/ratelimit"
)

type metadataMD = metadata.MD

// PushbackTrailer is the trailer in which a denial tells gRPC clients'
// retry policies how many milliseconds to wait before trying again.
const PushbackTrailer = "grpc-retry-pushback-ms"

// admitter decides calls through a limiter.
type admitter struct {
	l    *ratelimit.Limiter
	key  ratelimit.KeyFunc
	urls *sync.Map // full method -> *url.URL, shared read-only
	size *atomic.Int32
}

// maxURLs bounds the cache of method URLs (a server has a few methods).
const maxURLs = 1024

func newAdmitter(l *ratelimit.Limiter, opts []Option) admitter {
	if l == nil {
		panic("ratelimit/adapters/grpc: nil *ratelimit.Limiter")
	}
	return admitter{l: l, key: newConfig(opts).key, urls: new(sync.Map), size: new(atomic.Int32)}
}

// admit decides the call of ctx to method, sends the rate-limit headers
// through setHeader and, on a denial, the pushback through setTrailer. It
// returns nil if the call may go on, else its status error.
func (a admitter) admit(ctx context.Context, method string,
	setHeader, setTrailer func(context.Context, metadata.MD) error) error {
	r := a.request(ctx, method)
	w := recorders.Get().(*recorder)
	defer w.release()
	var ok bool
	if a.key == nil {
		ok = a.l.Admit(w, r)
	} else {
		ok = a.l.AdmitWithKeyFunc(w, r, a.key)
	}
	md := w.metadata()
	if ok {
		if md != nil {
			_ = setHeader(ctx, md) // fails only once headers were sent: nothing to add then
		}
		return nil
	}
	// A denial sends no headers, only trailers: a client's retry policy
	// retries only a call whose server sent no headers (gRPC's A6).
	st := callStatus(ctx, w)
	if st.Code() == codes.ResourceExhausted {
		if secs, err := strconv.Atoi(w.header.Get("Retry-After")); err == nil && secs > 0 {
			wait := time.Duration(secs) * time.Second
			if md == nil {
				md = metadata.MD{}
			}
			md[PushbackTrailer] = []string{strconv.FormatInt(wait.Milliseconds(), 10)}
			if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)}); err == nil {
				st = d
			}
		}
	}
	if md != nil {
		_ = setTrailer(ctx, md)
	}
	return st.Err()
}

// callStatus is the gRPC status of the HTTP answer w recorded for a call
// that may not go on.
func callStatus(ctx context.Context, w *recorder) *status.Status {
	switch w.code {
	case http.StatusTooManyRequests:
		return status.New(codes.ResourceExhausted, "rate limit exceeded")
	case http.StatusServiceUnavailable:
		return status.New(codes.Unavailable, "rate limiter unavailable")
	case http.StatusUnauthorized:
		return status.New(codes.Unauthenticated, strings.TrimSpace(w.body.String()))
	case http.StatusForbidden:
		return status.New(codes.PermissionDenied, strings.TrimSpace(w.body.String()))
	case 0:
		// Nothing was written: the client went away before the store answered.
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err)
		}
		return status.New(codes.Canceled, "call canceled")
	}
	if w.code >= 400 && w.code < 500 {
		return status.New(codes.InvalidArgument, strings.TrimSpace(w.body.String()))
	}
	return status.New(codes.Internal, "rate limiter error")
}

// request is the HTTP request the limiter decides on for a call: the peer's
// address, the metadata as headers, the full method as path and pattern.
func (a admitter) request(ctx context.Context, method string) *http.Request {
	r := &http.Request{
		Method:     http.MethodPost,
		URL:        a.url(method),
		Proto:      "HTTP/2.0",
		ProtoMajor: 2,
		Pattern:    method,
		RequestURI: method,
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok && md.Len() > 0 {
		r.Header = make(http.Header, md.Len())
		for k, vs := range md {
			if strings.HasPrefix(k, ":") {
				if k == ":authority" && len(vs) > 0 {
					r.Host = vs[0]
				}
				continue // pseudo-headers are not metadata a key should see
			}
			r.Header[textproto.CanonicalMIMEHeaderKey(k)] = vs
		}
	}
	return r.WithContext(ctx)
}

// url returns the URL of method, made once per method.
func (a admitter) url(method string) *url.URL {
	if u, ok := a.urls.Load(method); ok {
		return u.(*url.URL)
	}
	u := &url.URL{Path: method}
	if a.size.Load() < maxURLs {
		a.size.Add(1)
		a.urls.Store(method, u)
	}
	return u
}

// recorder is the http.ResponseWriter the limiter answers a call on: it
// keeps the headers and status, and the start of an error's body.
type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

var recorders = sync.Pool{New: func() any { return &recorder{header: http.Header{}} }}

// release clears w and puts it back in the pool.
func (w *recorder) release() {
	clear(w.header)
	w.code = 0
	w.body.Reset()
	recorders.Put(w)
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if room := 256 - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// metadataNames are the headers a limiter writes, as metadata keys.
var metadataNames = map[string]string{
	"X-Ratelimit-Limit":     "x-ratelimit-limit",
	"X-Ratelimit-Remaining": "x-ratelimit-remaining",
	"X-Ratelimit-Reset":     "x-ratelimit-reset",
	"Retry-After":           "retry-after",
	"Ratelimit-Policy":      "ratelimit-policy",
	"Ratelimit":             "ratelimit",
}

// metadata is the rate-limit headers of w as metadata, or nil. The values
// are the limiter's, shared read-only, as in its HTTP responses.
func (w *recorder) metadata() metadata.MD {
	var md metadata.MD
	for k, vs := range w.header {
		name, ok := metadataNames[k]
		if !ok {
			continue // Content-Type and the like of an HTTP error body
		}
		if md == nil {
			md = make(metadata.MD, len(w.header))
		}
		md[name] = vs
	}
	return md
}

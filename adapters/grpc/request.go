package grpclimit

import (
	"context"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratelimit-go/ratelimit"
)

// The slow path: the limiter decides on an HTTP request made from the
// call, for what only a request can give, such as a limiter's KeyFunc of
// its own or ratelimit.WithSkip and WithCost (see
// ratelimit.Limiter.DecidesByKey).

// admitRequest is admit on the slow path.
func (a admitter) admitRequest(ctx context.Context, method string,
	setHeader, setTrailer func(context.Context, metadata.MD) error) (*ratelimit.Admission, error) {
	r := a.request(ctx, method)
	w := recorders.Get().(*recorder)
	defer w.release()
	var adm *ratelimit.Admission
	var ok bool
	if a.key == nil {
		adm, ok = a.l.Begin(w, r)
	} else {
		adm, ok = a.l.BeginWithKeyFunc(w, r, a.key)
	}
	if ok {
		return adm, a.answer(ctx, nil, w.header, setHeader, setTrailer)
	}
	return adm, a.answer(ctx, callStatus(ctx, w.code, strings.TrimSpace(w.body.String())), w.header, setHeader, setTrailer)
}

// request is the HTTP request the limiter decides on for a call: the peer's
// address, the metadata as headers, the full method as path and pattern.
func (a admitter) request(ctx context.Context, method string) *http.Request {
	r := &http.Request{
		Method:     http.MethodPost,
		URL:        a.urls.of(method),
		Proto:      "HTTP/2.0",
		ProtoMajor: 2,
		Pattern:    method,
		RequestURI: method,
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
		if _, unix := p.Addr.(*net.UnixAddr); unix && p.LocalAddr != nil {
			// As net/http tells a request that came in on a unix socket
			// (clientip.TrustUnixSocket).
			ctx = context.WithValue(ctx, http.LocalAddrContextKey, p.LocalAddr)
		}
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

// methodURLs holds the URL of each method, made once, shared read-only.
type methodURLs struct {
	urls sync.Map // full method -> *url.URL
	size atomic.Int32
}

// of returns the URL of method.
func (m *methodURLs) of(method string) *url.URL {
	if u, ok := m.urls.Load(method); ok {
		return u.(*url.URL)
	}
	u := &url.URL{Path: method}
	if m.size.Load() < maxMethods {
		m.size.Add(1)
		m.urls.Store(method, u)
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

package ratelimit

// Every attempt a Transport's request makes takes a token: net/http may
// send a request more than once within one RoundTrip (a replayable request
// on a kept-alive connection that the server closed), and each of those
// reaches the third party. An httptrace hook sees each attempt get its
// connection, before a byte of it is written.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// attempts counts the attempts of one request sent through a Transport,
// and takes a token for each after the first (whose token RoundTrip took
// before sending).
type attempts struct {
	limiter *Limiter
	key     string
	base    http.RoundTripper
	ctx     context.Context // the request's, which cancel ends
	cancel  context.CancelCauseFunc
	n       atomic.Int32
	failed  atomic.Pointer[error] // why an attempt got no token
}

// traceAttempts returns req with a context whose GotConn hook takes each later
// attempt's token, and the attempts it counts. The caller ends the
// context (attempts.cancel) once the response's body is done with.
func traceAttempts(req *http.Request, l *Limiter, key string, base http.RoundTripper) (*http.Request, *attempts) {
	a := &attempts{limiter: l, key: key, base: base}
	a.ctx, a.cancel = context.WithCancelCause(req.Context())
	ctx := httptrace.WithClientTrace(a.ctx, &httptrace.ClientTrace{GotConn: a.gotConn})
	return req.WithContext(ctx), a
}

// gotConn is called when an attempt has its connection, before it writes:
// the first attempt's token is taken already; a later one (net/http's
// retry) waits for its own. One that gets none is cancelled, and its
// connection, when it is this attempt's alone (HTTP/1), closed, so that
// nothing of it is written.
func (a *attempts) gotConn(info httptrace.GotConnInfo) {
	if a.n.Add(1) == 1 {
		return
	}
	err := a.limiter.Wait(a.ctx, a.key)
	if err == nil {
		return
	}
	err = fmt.Errorf("ratelimit: a retry of the request got no token: %w", err)
	a.failed.CompareAndSwap(nil, &err)
	a.cancel(err)
	if info.Conn != nil && exclusive(info.Conn, a.base) {
		info.Conn.Close()
	}
}

// failure returns why an attempt got no token, or nil.
func (a *attempts) failure() error {
	if p := a.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// exclusive reports whether c carries one request at a time (HTTP/1), so
// that closing it ends only the attempt that has it: a TLS connection that
// did not negotiate h2, or a plain one of an [http.Transport] that does
// not speak unencrypted HTTP/2. An HTTP/2 connection carries other
// requests too.
func exclusive(c net.Conn, base http.RoundTripper) bool {
	if tc, ok := c.(interface{ ConnectionState() tls.ConnectionState }); ok {
		return tc.ConnectionState().NegotiatedProtocol != "h2"
	}
	t, ok := base.(*http.Transport)
	return ok && (t.Protocols == nil || !t.Protocols.UnencryptedHTTP2())
}

// releaseBody calls release once its body is read to the end or closed:
// the request's context lives as long as its response's body.
type releaseBody struct {
	io.ReadCloser
	release func()
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.release()
	}
	return n, err
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// releaseRWBody is a releaseBody that keeps its body's Write, which
// net/http gives a 101 Switching Protocols response.
type releaseRWBody struct {
	*releaseBody
	io.Writer
}

// releasing returns body, which calls release once it is done with.
func releasing(body io.ReadCloser, release func()) io.ReadCloser {
	if body == nil {
		release()
		return nil
	}
	b := &releaseBody{ReadCloser: body, release: release}
	if w, ok := body.(io.Writer); ok {
		return releaseRWBody{b, w}
	}
	return b
}

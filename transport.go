package ratelimit

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/hostkey"
)

// Transport is an [http.RoundTripper] that keeps the requests a service
// sends within a [Limiter]'s budget: each request waits for its token
// ([Limiter.Wait]) before it is sent. Over a shared store (Redis) every
// instance of the service draws from one budget, such as a third-party
// API's 100 calls a minute for the whole fleet.
//
// Every attempt that reaches the wire takes a token. net/http sends a
// replayable request (a GET, or one with GetBody) again within one
// RoundTrip when the kept-alive connection it used was closed by the
// server; that retry waits for a token of its own before a byte of it is
// written (the Transport sees each attempt get its connection, through an
// [httptrace.ClientTrace] GotConn hook that it adds to the request's
// context). A retry that cannot have its token (the context's deadline
// comes first, the store fails) is cancelled, and RoundTrip returns why;
// over HTTP/1 its connection is closed first, so nothing of it is sent
// (an HTTP/2 connection carries other requests: there the cancellation
// races net/http's write of the retry). An
// attempt that gets its connection but fails before writing costs its
// token too: the count errs on the side of the third party. A Base that
// sends its requests in some other way (no GotConn) is counted once per
// RoundTrip.
//
// A 429 answer with a Retry-After, if one still comes, feeds back into the
// budget: on a [Reserver] store the key's bucket is booked until then (up
// to 16 times the bucket's fill time, its capacity over its rate), so no
// instance sends before the third party said to. The 429 itself is
// returned to the caller, never retried: whether a request may be sent
// twice is the caller's to say.
type Transport struct {
	// Limiter decides; its first policy's limit is the budget. Required:
	// without it, every request fails with an error wrapping [ErrBadConfig].
	Limiter *Limiter
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Key names the budget of a request; nil means its URL's host in one
	// canonical form, so that one Transport keeps to one budget per third
	// party however its host is spelled, as when the URL comes from input
	// (a webhook's): lower case, non-ASCII names through IDNA as net/http
	// dials them, no trailing dot, no port when it is the scheme's default
	// (a port of its own is a budget of its own), IPv6 in its short form,
	// and IPv4 in the forms a C resolver accepts as a dotted quad
	// ("0x7f.1", "127.1" and "[::ffff:127.0.0.1]" are all "127.0.0.1").
	// Names are not resolved: anyone with a DNS zone can point many names
	// at one address, each a budget of its own; where that matters, name
	// the budget here (the third party's name, or who gave the URL).
	Key func(*http.Request) string
	// MaxPause bounds how long a Retry-After may pause the budget; 0 means
	// 10 minutes. A third party's header is not trusted further.
	MaxPause time.Duration
}

// errNoTransportLimiter is the error of every request through a
// [Transport] without its Limiter.
var errNoTransportLimiter = fmt.Errorf("ratelimit: Transport without a Limiter: %w", ErrBadConfig)

// defaultMaxPause is the longest a Retry-After pauses a [Transport]'s
// budget by default.
const defaultMaxPause = 10 * time.Minute

// RoundTrip implements [http.RoundTripper]: it waits for a token under the
// request's context, then sends the request through Base, each retry of
// it after a token of its own.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Limiter == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errNoTransportLimiter
	}
	key := t.key(req)
	if err := t.Limiter.Wait(req.Context(), key); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	sent, a := traceAttempts(req, t.Limiter, key, base)
	resp, err := base.RoundTrip(sent)
	if err != nil {
		if failed := a.failure(); failed != nil {
			err = failed
		}
		a.cancel(nil)
		return nil, err
	}
	if resp.Request == sent {
		resp.Request = req
	}
	resp.Body = releasing(resp.Body, func() { a.cancel(nil) })
	if resp.StatusCode == http.StatusTooManyRequests {
		maxPause := t.MaxPause
		if maxPause <= 0 {
			maxPause = defaultMaxPause
		}
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.Limiter.now()); ok {
			t.Limiter.pause(context.WithoutCancel(req.Context()), key, min(d, maxPause))
		}
	}
	return resp, nil
}

// key returns the name of req's budget: Key's, or its canonical host.
func (t *Transport) key(req *http.Request) string {
	if t.Key != nil {
		return t.Key(req)
	}
	if req.URL == nil {
		return ""
	}
	return hostkey.Canonical(req.URL.Scheme, req.URL.Host)
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110). Anything else, and a negative or past value, is
// not a pause.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 64 {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0, false
		}
		if s > int64(MaxPeriod/time.Second) {
			s = int64(MaxPeriod / time.Second)
		}
		return time.Duration(s) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil || !at.After(now) {
		return 0, false
	}
	return at.Sub(now), true
}

// pause books key's budget so that nothing more passes for d, on a
// limiter that books (one token-bucket policy over a Reserver store):
// bookings of what refills within d, a capacity at a time and at most
// maxPauseCalls of them (a booking holds at most a capacity, so a pause
// spans at most that many times the bucket's fill time), each a decision
// of the pass (op book): the time budget, the breaker and the failure
// policy apply. On other limiters it does nothing.
func (l *Limiter) pause(ctx context.Context, key string, d time.Duration) {
	if l.booker == nil || key == "" {
		return
	}
	p := l.getPass()
	defer passes.Put(p)
	if l.keyCall(ctx, key, p) != nil {
		return
	}
	lim := p.takes[0].Limit
	capacity, perSecond := lim.Capacity(), lim.PerSecondRate()
	booked := time.Duration(0) // the latest booking's delay
	for range maxPauseCalls {
		// The bucket may still hold tokens: n books them too, as the delay
		// stays 0 until they are spent.
		n := min(capacity, max(1, int((d-booked).Seconds()*perSecond+0.5)))
		p.op, p.maxWait = book, MaxPeriod
		o := l.run(ctx, n, p)
		if o.err != nil && (o.end == undecided || o.end == decided) { // failed, or the fallback decided
			l.onError(nil, o.err)
		}
		if o.end != decided || !o.res.Allowed || o.source != FromStore {
			return
		}
		booked = p.booking.Delay
		if booked+lim.refillTime(1, roundDown) >= d {
			return
		}
	}
}

// maxPauseCalls bounds the store calls of one pause.
const maxPauseCalls = 16

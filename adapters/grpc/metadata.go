package grpclimit

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"
)

// The rate-limit headers of a call, as metadata. A limiter's header values
// recur (every client of a limit sees the same few), so the metadata of
// each set of values is made once and shared read-only: a call then
// allocates none. gRPC copies what SetHeader and SetTrailer are given
// (metadata.Join) and never changes it.

// headerNames are the headers a limiter writes, in the order of
// headerIndex, and their metadata keys.
var headerNames = [...]struct{ header, md string }{
	{"X-Ratelimit-Limit", "x-ratelimit-limit"},
	{"X-Ratelimit-Remaining", "x-ratelimit-remaining"},
	{"X-Ratelimit-Reset", "x-ratelimit-reset"},
	{"Ratelimit-Policy", "ratelimit-policy"},
	{"Ratelimit", "ratelimit"},
	{"Retry-After", "retry-after"},
}

const retryAfter = len(headerNames) - 1 // the index of Retry-After

// callMetadata is the metadata of one set of header values, shared
// read-only.
type callMetadata struct {
	values [len(headerNames)]string // "" for a header not written
	md     metadata.MD              // the headers; nil if none
	// With a Retry-After: the wait it says, and md with the pushback.
	wait     time.Duration
	pushback metadata.MD
}

// metadataCache holds the callMetadata of recent header values: a
// direct-mapped table of immutable entries, read and replaced without
// locks.
type metadataCache struct {
	slots *[metadataSlots]atomic.Pointer[callMetadata]
}

const metadataSlots = 1024 // a power of two

func newMetadataCache() metadataCache {
	return metadataCache{slots: new([metadataSlots]atomic.Pointer[callMetadata])}
}

// of returns the metadata of the rate-limit headers in h, which the
// limiter wrote with one value each.
func (c metadataCache) of(h http.Header) *callMetadata {
	var values [len(headerNames)]string
	var sum uint64
	found := 0
	for i := 0; i < len(headerNames) && found < len(h); i++ { // lookups: a range would cost more
		vs, ok := h[headerNames[i].header]
		if !ok {
			continue
		}
		found++
		if len(vs) != 1 {
			return newCallMetadata(h) // not the limiter's own: never shared
		}
		values[i] = vs[0]
		sum = (sum ^ fold(vs[0]) ^ uint64(i)) * 0x9e3779b97f4a7c15
	}
	slot := &c.slots[(sum^sum>>32)&(metadataSlots-1)]
	if e := slot.Load(); e != nil && e.values == values {
		return e
	}
	e := newCallMetadata(h)
	slot.Store(e)
	return e
}

// fold is a cheap hash of a header value: its length and its first and
// last 8 bytes, which hold the numbers that vary. The values are the
// limiter's, never a client's, so nothing chooses their slots.
func fold(s string) uint64 {
	h := uint64(len(s))
	n := min(len(s), 8)
	for i := range n {
		h = h<<8 | uint64(s[i])
	}
	for i := max(n, len(s)-8); i < len(s); i++ {
		h = h*131 + uint64(s[i])
	}
	return h
}

// headerIndex is the index of header name in headerNames, or -1.
func headerIndex(name string) int {
	switch name {
	case "X-Ratelimit-Limit":
		return 0
	case "X-Ratelimit-Remaining":
		return 1
	case "X-Ratelimit-Reset":
		return 2
	case "Ratelimit-Policy":
		return 3
	case "Ratelimit":
		return 4
	case "Retry-After":
		return retryAfter
	}
	return -1
}

func newCallMetadata(h http.Header) *callMetadata {
	e := &callMetadata{}
	for k, vs := range h {
		i := headerIndex(k)
		if i < 0 {
			continue
		}
		if len(vs) > 0 {
			e.values[i] = vs[0]
		}
		if e.md == nil {
			e.md = make(metadata.MD, len(headerNames))
		}
		e.md[headerNames[i].md] = vs
	}
	if secs, err := strconv.Atoi(e.values[retryAfter]); err == nil && secs > 0 {
		e.wait = time.Duration(secs) * time.Second
		e.pushback = make(metadata.MD, len(e.md)+1)
		for k, vs := range e.md {
			e.pushback[k] = vs
		}
		e.pushback[PushbackTrailer] = []string{strconv.FormatInt(e.wait.Milliseconds(), 10)}
	}
	return e
}

package redisstore

import (
	"sync/atomic"
	"time"
)

// skew estimates how far Redis's clock is ahead of the app's, so that a
// caller's deadline, read on the app's clock, can be sent in Redis's: a
// script compares it with Redis TIME, and an app server whose clock is
// behind Redis's must not see every call refused as late.
//
// Each script returns the TIME it used. A reply that came back quickly
// (within maxSampleRTT) bounds the offset from above by TIME minus the
// instant the call was sent; the smallest such bound is kept, and renewed
// every renewOffset so that a clock that drifts is followed. A quick reply
// that refused a take as late is taken at once: Redis's clock was stepped
// forward (an NTP step, a VM resumed), and the kept bound, now below the
// offset, would have every call refused until the renewal. The estimate
// is above the true offset by at most the call's one-way delay, so a
// deadline is only ever moved later, never earlier.
type skew struct {
	known  atomic.Bool
	offset atomic.Int64 // µs, Redis minus app
	at     atomic.Int64 // the app's Unix µs when offset was set
}

const (
	maxSampleRTT = 10 * time.Millisecond
	renewOffset  = 10 * time.Second
)

// observe takes the TIME a script returned (µs) for a call sent at sent
// that answered at done; refusedLate if the reply refused a take as late.
func (k *skew) observe(redisNow int64, sent, done time.Time, refusedLate bool) {
	if done.Sub(sent) > maxSampleRTT {
		return // a slow reply says little: Redis may have stalled
	}
	sample := redisNow - sent.UnixMicro()
	now := done.UnixMicro()
	if refusedLate || !k.known.Load() || sample < k.offset.Load() || now-k.at.Load() > renewOffset.Microseconds() {
		k.offset.Store(sample)
		k.at.Store(now)
		k.known.Store(true)
	}
}

// deadline converts a deadline on the app's clock to Redis's, in µs; false
// until a reply has shown the offset, when the call is sent without one.
func (k *skew) deadline(d time.Time) (int64, bool) {
	if !k.known.Load() {
		return 0, false
	}
	return d.UnixMicro() + k.offset.Load(), true
}

// set takes the TIME a script returned (µs) for a call sent at sent as the
// offset, whatever it was: after a calendar window Redis's clock was not
// in, when the two clocks are a window apart (a stepped clock, a test's).
func (k *skew) set(redisNow int64, sent time.Time) {
	k.offset.Store(redisNow - sent.UnixMicro())
	k.at.Store(time.Now().UnixMicro())
	k.known.Store(true)
}

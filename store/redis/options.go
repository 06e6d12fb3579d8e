package redisstore

import "time"

// DefaultPrefix is the prefix of every key the store writes, unless
// [WithPrefix] sets another.
const DefaultPrefix = "ratelimit:"

// Option configures a [Store]; pass options to [New].
// A nil Option is ignored.
type Option func(*Store)

// WithPrefix sets the prefix of the store's Redis keys; the default is
// [DefaultPrefix]. A key is prefix + an algorithm tag ("tb:" for the token
// bucket) + the caller's key. Put a hash tag such as "{tenant}" in keys, not
// in the prefix, if several keys must live in one Cluster slot.
func WithPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// WithAppClock makes the scripts use the app server's clock, now, instead of
// Redis TIME: for Redis-compatible services that refuse TIME inside scripts,
// and for tests. App servers whose clocks disagree then disagree about
// refills, so TIME, the default, is better wherever it works. Expiries stay
// relative to the server's clock, with a second more than needed, so an app
// clock that is off never expires a key early. A nil now keeps TIME.
//
// So that servers whose clocks differ by up to that second do not, taking
// turns on a key, each refill it by their difference on every turn (every
// request passed, with clocks 400 ms apart), a key's time never goes back:
// a token bucket is decided as of its last update when the clock is behind
// it (the only answers that differ from x/time/rate's, which rewinds), and
// a fixed window or calendar quota that a clock ahead opened, or a sliding
// window that a clock up to a second ahead opened (the next, or one further
// on for windows shorter than the clocks' difference), is the window a
// clock behind decides in. A key then admits its budget and at most what
// the clocks' difference refills.
func WithAppClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithoutBatching makes the store send every decision of [Store.AllowN],
// [Store.ReserveN], [Store.CancelReservation] and [Store.AllowAll] in a
// script call of its own, as soon as it is made, as many at once as the client's pool allows.
// By default, decisions that find several calls to the same node in flight
// wait for one to return and go together in the next call (group commit):
// fewer calls, far less work for Redis, and no extra wait for a lone
// decision. Turn it off for Redis-compatible services that limit a
// script's keys, or to compare.
func WithoutBatching() Option {
	return func(s *Store) { s.batching = false }
}

// WithPerSlotBatches makes a store on a Redis Cluster send each master's
// batch of decisions as a pipeline of one script call per slot, instead of
// one script call over the master's slots (the default, which needs Redis
// 7's allow-cross-slot-keys flag and a server that runs a script's
// undeclared keys). For Redis before 7 and proxies or managed services
// that refuse such scripts; the store also turns to it by itself the first
// time a master refuses the script. No effect on other clients.
func WithPerSlotBatches() Option {
	return func(s *Store) { s.perSlot.Store(true) }
}

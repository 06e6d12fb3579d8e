package ratelimit

import "errors"

// Errors of a call that no retry can cure: returned by stores, limiters
// and [Limit.Validate], wrapped with detail; test for them with errors.Is.
var (
	// ErrInvalidLimit reports a Limit that cannot be enforced.
	ErrInvalidLimit = errors.New("ratelimit: invalid limit")
	// ErrInvalidCost reports a negative cost n.
	ErrInvalidCost = errors.New("ratelimit: invalid cost")
	// ErrCostExceedsCapacity reports a cost above Limit.Capacity(): such a
	// request could never pass, so it is refused instead of waiting forever.
	ErrCostExceedsCapacity = errors.New("ratelimit: cost exceeds capacity")
	// ErrEmptyKey reports an empty key.
	ErrEmptyKey = errors.New("ratelimit: empty key")
	// ErrMissingKey is wrapped by the errors of the extractors of this package
	// when a request lacks what they key on.
	ErrMissingKey = errors.New("ratelimit: missing key")
	// ErrBadConfig is wrapped by the errors of a configuration that cannot
	// work, such as KeyByIP given a prefix length out of range: [New] reports
	// them, and a key function so configured fails every request with one
	// (answered 500, told to the error handler).
	ErrBadConfig = errors.New("ratelimit: bad configuration")
	// ErrDuplicateKey reports two takes of one AllowAll call with the same key.
	ErrDuplicateKey = errors.New("ratelimit: AllowAll: keys must be distinct")
	// ErrInvalidAge reports a negative age of a refund's take.
	ErrInvalidAge = errors.New("ratelimit: negative refund age")
	// ErrInvalidWait reports a negative bound on a reservation's wait.
	ErrInvalidWait = errors.New("ratelimit: negative wait bound")
	// ErrNotTokenBucket reports a reservation under a limit that is not a
	// [TokenBucket]: only a token bucket can book the future.
	ErrNotTokenBucket = errors.New("ratelimit: reservations need a token bucket")
	// ErrCrossSlot is returned by a MultiStore that cannot decide the keys of
	// one call atomically, such as Redis Cluster keys in different slots;
	// [AllowAll] then decides them one by one.
	ErrCrossSlot = errors.New("ratelimit: keys cannot be decided in one atomic step")
	// ErrNoReset is returned by [Limiter.Reset] on a store that does not
	// implement [Resetter].
	ErrNoReset = errors.New("ratelimit: the store cannot reset a key (see Resetter)")
)

// Errors of a store call that failed: the limiter's failure policy
// answers ([WithFailOpen], [WithFailClosed], [WithFallback]), and the
// breaker counts them, except where said.
var (
	// ErrMisconfiguredStore is wrapped by a store's errors that no retry
	// can cure, only a change of configuration: a Redis Cluster node behind
	// a single-node client (MOVED), a read-only replica, a refused
	// authentication, a key holding data of another kind. A limiter treats
	// them as store failures (the failure policy answers, the breaker
	// counts them) and logs them apart, at most once a second, as what to
	// fix.
	ErrMisconfiguredStore = errors.New("ratelimit: store misconfigured")
	// ErrTimeout reports a store that did not answer within the limiter's time
	// budget (see [WithTimeout]). It is a store failure: the failure policy
	// answers the request. Errors that wrap it also wrap
	// context.DeadlineExceeded.
	ErrTimeout = errors.New("ratelimit: store did not answer in time")
	// ErrNotSent reports a decision that a store held in a queue and never
	// sent, because its time budget ended first or the queue was full: the
	// store is busy, not failing. The failure policy answers the request, but
	// the [Breaker] does not count it against the store (load shedding): a
	// flood that queues decisions behind a slow store fails only the decisions
	// that could not be sent, and never switches the limits off for everyone.
	// A decision that was sent and not answered in time is a failure
	// ([ErrTimeout]). Errors of the limiter that wrap ErrNotSent also wrap
	// ErrTimeout.
	ErrNotSent = errors.New("ratelimit: not sent to the store within its time budget")
	// ErrBreakerOpen is the error of a decision that was not sent to the store
	// because its [Breaker] is open: the failure policy answered instead. The
	// errors that wrap it also wrap the store failure that opened the breaker.
	ErrBreakerOpen = errors.New("ratelimit: store failing, breaker open")
)

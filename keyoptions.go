package ratelimit

import (
	"bytes"
	"errors"
)

// WithKeySecret sets the secret of the keyed hash (HMAC-SHA256) under which
// keys that come from the request reach the store: a header such as an
// API key ([KeyByHeader]), the context ([KeyByContext]) or your own
// KeyFunc's. The store then holds "h:" and 22 characters of the hash,
// which cannot be reversed nor checked against a list of likely keys
// without the secret. Address and route keys ([KeyByIP], [KeyByRoute])
// are stored as they are: they carry no secret.
//
// Every instance that shares a store (every server on one Redis) must be
// given the same secret, or each would count its own budget; keep it with
// your other secrets, at least 16 random bytes. Changing it starts every
// hashed key's budget afresh, once.
//
// The default: on a [Local] store, such as store/memory, none, and no hash:
// keys stay in the process's memory, as they are (bounded as [MaxKeyLen]
// says), and an [Observer] with Keys sees them so; give WithKeySecret to
// hash them there too. On any other store there is none: [New] refuses a
// limiter keyed by a KeyFunc of its own ([WithKeyFunc], a [Policy]'s Key)
// without WithKeySecret or [WithPlainKeys] ([ErrBadConfig]), and a key
// given at the call ([Limiter.AllowN], [Limiter.AdmitWithKeyFunc]) that
// needs the hash is an error (wrapping [ErrBadConfig]; 500 for a request), never
// sent in plain text. The default KeyFunc, [KeyByIP], needs no secret. The
// hash costs about a microsecond for a key the limiter has not seen
// recently, nothing for one it has.
func WithKeySecret(secret []byte) Option {
	return func(c *config) error {
		if len(secret) < MinKeySecretLen {
			return errors.New("ratelimit: WithKeySecret: want a secret of at least 16 bytes")
		}
		c.keySecret, c.plainKeys = bytes.Clone(secret), false
		return nil
	}
}

// WithPlainKeys makes every key reach the store as the KeyFunc gave it,
// hashed (with SHA-256, unkeyed) only if longer than [MaxKeyLen]: keys from
// headers or the context, such as API keys, are then readable by anyone
// who can list the store's keys (Redis SCAN, MONITOR, backups) and by an
// [Observer] with Keys. Use it only when the keys are not secrets, such as
// tenant names. It undoes [WithKeySecret].
func WithPlainKeys() Option {
	return func(c *config) error {
		c.keySecret, c.plainKeys = nil, true
		return nil
	}
}

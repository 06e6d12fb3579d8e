package redis

import (
	_ "embed"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// Each algorithm is one Lua script: prelude.lua, which reads the arguments
// and the clock, then the algorithm's own file. Each takes KEYS[1] and
// ARGV = rate per second, capacity, cost n, period in µs, the app's clock in
// µs or "" (Redis TIME), and the caller's deadline in µs or "", and returns {allowed, remaining, retry-after µs,
// reset-after µs}.
var (
	//go:embed prelude.lua
	preludeLua string
	//go:embed bucket.lua
	bucketLua string
	//go:embed window.lua
	windowLua string
	//go:embed swindow.lua
	slidingWindowLua string
	//go:embed log.lua
	logLua string
)

type script struct {
	name   string
	tag    string // in the key, between the prefix and the caller's key
	script *goredis.Script
	source string // for EVAL after NOSCRIPT
}

// scripts is indexed by ratelimit.Algorithm.
var scripts = [...]script{
	ratelimit.TokenBucket:   {"bucket.lua", "tb:", goredis.NewScript(preludeLua + bucketLua), preludeLua + bucketLua},
	ratelimit.FixedWindow:   {"window.lua", "fw:", goredis.NewScript(preludeLua + windowLua), preludeLua + windowLua},
	ratelimit.SlidingWindow: {"swindow.lua", "sw:", goredis.NewScript(preludeLua + slidingWindowLua), preludeLua + slidingWindowLua},
	ratelimit.SlidingLog:    {"log.lua", "sl:", goredis.NewScript(preludeLua + logLua), preludeLua + logLua},
}

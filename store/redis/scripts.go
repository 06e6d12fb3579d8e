package redis

import (
	_ "embed"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// Each algorithm's file defines one function that decides a take without
// writing and returns the writes that commit it (see prelude.lua). A
// one-key script is prelude.lua, the algorithm's file and single.lua, which
// commits at once; it takes KEYS[1] and ARGV = rate per second, capacity,
// cost n, period in µs, the app's clock in µs or "" (Redis TIME), and the
// caller's deadline in µs or "", and returns {allowed, remaining,
// retry-after µs, reset-after µs}. The multi-key script (multi.lua) has
// every algorithm and commits only if all its takes are allowed.
var (
	//go:embed prelude.lua
	preludeLua string
	//go:embed single.lua
	singleLua string
	//go:embed multi.lua
	multiLua string
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

// newScript makes the script name of source.
func newScript(name, tag, source string) script {
	return script{name: name, tag: tag, script: goredis.NewScript(source), source: source}
}

// oneKey is the one-key script of the algorithm that fn, defined in lua,
// decides.
func oneKey(lua, fn string) string {
	return preludeLua + lua + singleLua + "return single(" + fn + ")\n"
}

// scripts is indexed by ratelimit.Algorithm.
var scripts = [...]script{
	ratelimit.TokenBucket:   newScript("bucket.lua", "tb:", oneKey(bucketLua, "bucket")),
	ratelimit.FixedWindow:   newScript("window.lua", "fw:", oneKey(windowLua, "window")),
	ratelimit.SlidingWindow: newScript("swindow.lua", "sw:", oneKey(slidingWindowLua, "swindow")),
	ratelimit.SlidingLog:    newScript("log.lua", "sl:", oneKey(logLua, "slidinglog")),
}

// multiScript decides several takes, of any algorithms, as one.
var multiScript = newScript("multi.lua", "", preludeLua+bucketLua+windowLua+slidingWindowLua+logLua+multiLua)

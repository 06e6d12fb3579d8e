package redis

import (
	_ "embed"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// Two scripts decide everything: batch.lua decides one take or a batch of
// takes, each on its own (Store.AllowN), and multi.lua several takes as one
// (Store.AllowAll). Both are prelude.lua (the clock and the encodings),
// every algorithm's file and their own end.
var (
	//go:embed prelude.lua
	preludeLua string
	//go:embed batch.lua
	batchLua string
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

// tags are the algorithms' parts of a key, between the prefix and the
// caller's key, indexed by ratelimit.Algorithm.
var tags = [...]string{"tb:", "fw:", "sw:", "sl:"}

type script struct {
	name   string
	script *goredis.Script
	source string // for EVAL after NOSCRIPT
}

// newScript makes the script name of the algorithms and end.
func newScript(name, end string, binary bool) *script {
	prelude := preludeLua
	if !binary {
		prelude = strings.Replace(prelude, structLine, "local struct = nil\n", 1)
	}
	source := prelude + bucketLua + windowLua + slidingWindowLua + logLua + end
	return &script{name: name, script: goredis.NewScript(source), source: source}
}

// structLine is the line of prelude.lua that finds the struct library.
const structLine = "local struct = rawget(_G, 'struct')\n"

// scriptSet is the pair of scripts a store runs.
type scriptSet struct{ batch, multi *script }

var (
	// detected packs state and replies as binary wherever the server's Lua
	// has struct, and falls back to strings where it has not.
	detected = scriptSet{newScript("batch.lua", batchLua, true), newScript("multi.lua", multiLua, true)}
	// stringsOnly always uses strings: the fallback, forced (for tests).
	stringsOnly = scriptSet{newScript("batch.lua", batchLua, false), newScript("multi.lua", multiLua, false)}
)

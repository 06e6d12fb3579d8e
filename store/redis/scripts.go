package redisstore

import (
	_ "embed"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// The scripts: batch.lua decides a batch of takes, bookings,
// cancellations and AllowAlls, each on its own (Store.AllowN, ReserveN,
// CancelReservation and AllowAll under load); one.lua and onelog.lua a
// take sent alone, with the code of its algorithm only, onereserve.lua a
// booking or a cancellation sent alone, and onemulti.lua an AllowAll sent
// alone, with multi.lua's multi, which decides several takes as one. Each
// is prelude.lua (the clock and the encodings), the algorithms' files and
// its own end.
var (
	//go:embed prelude.lua
	preludeLua string
	//go:embed batch.lua
	batchLua string
	//go:embed multi.lua
	multiLua string
	//go:embed onemulti.lua
	oneMultiLua string
	//go:embed one.lua
	oneLua string
	//go:embed onelog.lua
	oneLogLua string
	//go:embed bucket.lua
	bucketLua string
	//go:embed window.lua
	windowLua string
	//go:embed swindow.lua
	slidingWindowLua string
	//go:embed log.lua
	logLua string
	//go:embed reserve.lua
	reserveLua string
	//go:embed onereserve.lua
	oneReserveLua string
	//go:embed refund.lua
	refundLua string
)

// tags are the algorithms' parts of a key, between the prefix and the
// caller's key, indexed by ratelimit.Algorithm.
var tags = [...]string{"tb:", "fw:", "sw:", "sl:"}

type script struct {
	name   string
	script *goredis.Script
	source string // for EVAL after NOSCRIPT
}

// newScript makes the script name of body, after prelude.lua.
func newScript(name, body string, binary bool) *script {
	prelude := preludeLua
	if !binary {
		prelude = strings.Replace(prelude, structLine, "local struct = nil\n", 1)
	}
	source := prelude + body
	return &script{name: name, script: goredis.NewScript(source), source: source}
}

// newSet makes the scripts, packing as binary where the server can if
// binary is set.
func newSet(binary bool) scriptSet {
	all := bucketLua + windowLua + slidingWindowLua + logLua
	return scriptSet{
		one: [...]*script{
			ratelimit.TokenBucket:   newScript("bucket.lua", bucketLua+oneLua+"return one(bucket)\n", binary),
			ratelimit.FixedWindow:   newScript("window.lua", windowLua+oneLua+"return one(window)\n", binary),
			ratelimit.SlidingWindow: newScript("swindow.lua", slidingWindowLua+oneLua+"return one(swindow)\n", binary),
			ratelimit.SlidingLog:    newScript("log.lua", logLua+oneLogLua, binary),
		},
		batch:   newScript("batch.lua", all+reserveLua+multiLua+batchLua, binary),
		multi:   newScript("multi.lua", all+multiLua+oneMultiLua, binary),
		reserve: newScript("reserve.lua", reserveLua+oneReserveLua, binary),
		refund:  newScript("refund.lua", all+reserveLua+refundLua, binary),
	}
}

// structLine is the line of prelude.lua that finds the struct library.
const structLine = "local struct = rawget(_G, 'struct')\n"

// scriptSet is the scripts a store runs; one is indexed by
// ratelimit.Algorithm.
type scriptSet struct {
	one          [4]*script
	batch, multi *script
	reserve      *script // a booking or its cancellation sent alone (reserve.go)
	refund       *script // a refund (refund.go)
}

var (
	// detected packs state and replies as binary wherever the server's Lua
	// has struct, and falls back to strings where it has not.
	detected = newSet(true)
	// stringsOnly always uses strings: the fallback, forced (for tests).
	stringsOnly = newSet(false)
)

// all lists the scripts of the set.
func (set *scriptSet) all() []*script {
	return append(set.one[:len(set.one):len(set.one)], set.batch, set.multi, set.reserve, set.refund)
}

package redisstore

import (
	"embed"
	"slices"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// The scripts are composed from the Lua files below, each written once:
// prelude.lua (the clock and the replies), one file per algorithm (its
// state's decoding and encoding and its decision: bucket.lua, window.lua,
// swindow.lua, log.lua), algorithms.lua (the decisions by algorithm),
// reserve.lua (bookings and cancellations, on bucket.lua's functions),
// multi.lua (several takes as one), and each script's own end: batch.lua
// decides a batch of takes, bookings, cancellations and AllowAlls, each on
// its own (Store.AllowN, ReserveN, CancelReservation and AllowAll under
// load); one.lua a take sent alone, with the code of its algorithm only;
// onereserve.lua a booking or a cancellation sent alone; onemulti.lua an
// AllowAll sent alone; refund.lua a refund. batch.lua reads its keys
// through read.lua (one MGET: they share a slot) or, in the node script,
// through node.lua (keys of several slots of one Cluster master). Every script starts with its
// encoding line, the one difference between the binary and the string
// variants.
//
//go:embed *.lua
var luaFiles embed.FS

// lua returns the Lua file name.
func lua(name string) string {
	b, err := luaFiles.ReadFile(name)
	if err != nil {
		panic("ratelimit/redis: missing script file " + name) // the embed pattern holds them all
	}
	return string(b)
}

// recipes are the files each script is composed of, in order, after its
// encoding line; a piece that does not end in ".lua" is a line of its own.
var recipes = scriptRecipes{
	one: [4][]string{
		ratelimit.TokenBucket:   {"prelude.lua", "bucket.lua", "one.lua", "return one(bucket)\n"},
		ratelimit.FixedWindow:   {"prelude.lua", "window.lua", "one.lua", "return one(window)\n"},
		ratelimit.SlidingWindow: {"prelude.lua", "swindow.lua", "one.lua", "return one(swindow)\n"},
		ratelimit.SlidingLog:    {"prelude.lua", "log.lua", "one.lua", "return one(logTake, true)\n"},
	},
	batch:   []string{"prelude.lua", "bucket.lua", "window.lua", "swindow.lua", "log.lua", "algorithms.lua", "reserve.lua", "multi.lua", "read.lua", "batch.lua"},
	node:    []string{"prelude.lua", "bucket.lua", "window.lua", "swindow.lua", "log.lua", "algorithms.lua", "reserve.lua", "multi.lua", "node.lua", "batch.lua"},
	multi:   []string{"prelude.lua", "bucket.lua", "window.lua", "swindow.lua", "log.lua", "algorithms.lua", "multi.lua", "onemulti.lua"},
	reserve: []string{"prelude.lua", "bucket.lua", "reserve.lua", "onereserve.lua"},
	refund:  []string{"prelude.lua", "bucket.lua", "window.lua", "swindow.lua", "log.lua", "algorithms.lua", "reserve.lua", "refund.lua"},
}

// scriptRecipes are the files of each script of a scriptSet.
type scriptRecipes struct {
	one                                 [4][]string
	batch, node, multi, reserve, refund []string
}

// The encoding lines: struct packs state and replies as binary where the
// server's Lua has it; nil makes every script use strings.
const (
	binaryEncoding = "local struct = rawget(_G, 'struct')\n"
	stringEncoding = "local struct = nil\n"
)

// tags are the algorithms' parts of a key, between the prefix and the
// caller's key, indexed by ratelimit.Algorithm.
var tags = [...]string{"tb:", "fw:", "sw:", "sl:"}

type script struct {
	name   string
	script *goredis.Script
	source string // for EVAL after NOSCRIPT
}

// nodeFlags is the first line of the node script: Redis 7's flag that lets
// a script reach keys of several slots (all of one node: node.lua checks).
const nodeFlags = "#!lua flags=allow-cross-slot-keys\n"

// compose returns the source of the script of recipe, after encoding (and
// the node script's flags line, which must come first).
func compose(encoding string, recipe []string) string {
	var b strings.Builder
	if slices.Contains(recipe, "node.lua") {
		b.WriteString(nodeFlags)
	}
	b.WriteString(encoding)
	for _, piece := range recipe {
		if strings.HasSuffix(piece, ".lua") {
			piece = lua(piece)
		}
		b.WriteString(piece)
	}
	return b.String()
}

// newScript makes the script name of recipe.
func newScript(name, encoding string, recipe []string) *script {
	source := compose(encoding, recipe)
	return &script{name: name, script: goredis.NewScript(source), source: source}
}

// newSet makes the scripts with the encoding line encoding.
func newSet(encoding string) scriptSet {
	r := &recipes
	return scriptSet{
		one: [...]*script{
			ratelimit.TokenBucket:   newScript("bucket.lua", encoding, r.one[ratelimit.TokenBucket]),
			ratelimit.FixedWindow:   newScript("window.lua", encoding, r.one[ratelimit.FixedWindow]),
			ratelimit.SlidingWindow: newScript("swindow.lua", encoding, r.one[ratelimit.SlidingWindow]),
			ratelimit.SlidingLog:    newScript("log.lua", encoding, r.one[ratelimit.SlidingLog]),
		},
		batch:   newScript("batch.lua", encoding, r.batch),
		node:    newScript("node.lua", encoding, r.node),
		multi:   newScript("multi.lua", encoding, r.multi),
		reserve: newScript("reserve.lua", encoding, r.reserve),
		refund:  newScript("refund.lua", encoding, r.refund),
	}
}

// scriptSet is the scripts a store runs; one is indexed by
// ratelimit.Algorithm.
type scriptSet struct {
	one          [4]*script
	batch, multi *script
	node         *script // a batch over one Cluster master's slots (cluster.go)
	reserve      *script // a booking or its cancellation sent alone (reserve.go)
	refund       *script // a refund (refund.go)
}

var (
	// detected packs state and replies as binary wherever the server's Lua
	// has struct, and falls back to strings where it has not.
	detected = newSet(binaryEncoding)
	// stringsOnly always uses strings: the fallback, forced (for tests).
	stringsOnly = newSet(stringEncoding)
)

// all lists the scripts of the set.
func (set *scriptSet) all() []*script {
	return append(set.one[:len(set.one):len(set.one)], set.batch, set.node, set.multi, set.reserve, set.refund)
}

package main

import (
	"fmt"
	"io"
	"math"
)

// The targets, measured, and the README's headline table.

// target is one goal of the issue, measured.
type target struct {
	what     string
	measured float64
	goal     float64
	atMost   bool // measured <= goal passes; else measured >= goal
	exact    bool // least and measured both equal goal, to 0.5%
	least    float64
	show     func(float64) string
	profile  string // the profile that shows what bounds it
}

func (t target) pass() bool {
	if math.IsNaN(t.measured) {
		return false
	}
	if t.exact {
		return math.Abs(t.least-t.goal) <= 0.005*t.goal && math.Abs(t.measured-t.goal) <= 0.005*t.goal
	}
	if t.atMost {
		return t.measured <= t.goal+1e-9
	}
	return t.measured >= t.goal-1e-9
}

// by says how far a missed target is from its goal.
func (t target) by() string {
	if math.IsNaN(t.measured) {
		return "not measured"
	}
	if t.pass() {
		return ""
	}
	if t.goal == 0 {
		return fmt.Sprintf("%s over", t.show(t.measured))
	}
	if t.exact {
		return "not exactly " + t.show(t.goal)
	}
	if t.atMost {
		return fmt.Sprintf("%.0f%% over the goal", 100*(t.measured/t.goal-1))
	}
	return fmt.Sprintf("%.0f%% under the goal", 100*(1-t.measured/t.goal))
}

func targets(r *results) []target {
	ratio := func(v float64) string { return fmtRatio(v) }
	plain := func(v float64) string { return fmtNum(v) }
	ns := func(suite string, procs int, lib string) float64 { return r.med(suite, procs, lib, "ns/op") }
	maxProcs := 1
	for _, k := range r.order {
		maxProcs = max(maxProcs, k.procs)
	}
	p := maxProcs

	// The fastest peer's middleware overhead.
	bare := ns("Middleware", p, "bare")
	fastest, fastestLib := math.Inf(1), ""
	for _, lib := range r.rows("Middleware", p) {
		if lib == "bare" || lib == "ours" {
			continue
		}
		if v := ns("Middleware", p, lib) - bare; v < fastest {
			fastest, fastestLib = v, lib
		}
	}
	rt := func(suite, a, b string) float64 { return r.ratio(suite, p, a, b, "ns/op") }
	at64, at1 := redisCell(false, "allowed", 64), redisCell(false, "allowed", 1)
	tput := func(lib, peer string) float64 { // throughput ratio: peer ns / ours ns
		return r.ratio(at64, p, peer, lib, "ns/op")
	}
	return []target{
		{what: "memory, hot key: ours / x/time/rate (ns/op, serial)", measured: rt("HotKeySerial", "ours", "xtimerate"), goal: 0.77, atMost: true, show: ratio, profile: "hotkey"},
		{what: "memory, hot key: ours / sethvargo (ns/op, serial)", measured: rt("HotKeySerial", "ours", "sethvargo"), goal: 1.0, atMost: true, show: ratio, profile: "hotkey"},
		{what: "memory, hot key: ours / sethvargo (ns/op, parallel)", measured: rt("HotKeyParallel", "ours", "sethvargo"), goal: 1.0, atMost: true, show: ratio},
		{what: "memory, hot key: ours allocs/op", measured: r.med("HotKeySerial", p, "ours", "allocs/op"), goal: 0, atMost: true, show: plain},
		{what: fmt.Sprintf("memory, 100k keys, -cpu %d: ours / sethvargo (ns/op)", p), measured: rt("ManyKeys", "ours", "sethvargo"), goal: 0.5, atMost: true, show: ratio, profile: "manykeys"},
		{what: "memory: ours heap per key after 1M keys (B/key)", measured: r.med("BytesPerKey", p, "ours", "B/key"), goal: 64, atMost: true, show: plain},
		{what: fmt.Sprintf("memory, 100k keys: ours -cpu %d / -cpu 1 (ns/op; below 1 is faster)", p), measured: r.procsRatio("ManyKeys", "ours", p, 1), goal: 1.0, atMost: true, show: ratio, profile: "manykeys"},
		{what: fmt.Sprintf("middleware overhead, headers on: ours / fastest peer (%s)", fastestLib), measured: r.overheadRatio("Middleware", p, "ours", fastestLib, "bare"), goal: 0.3, atMost: true, show: ratio, profile: "middleware"},
		{what: "middleware: ours allocs/op", measured: r.med("Middleware", p, "ours", "allocs/op"), goal: 1, atMost: true, show: plain, profile: "middleware"},
		{what: "Redis, 64 goroutines: ours token bucket throughput / redis_rate's", measured: tput("ours-tb", "redis_rate"), goal: 2.0, show: ratio, profile: "redis"},
		{what: "Redis, 64 goroutines: ours token bucket throughput / the reference script's", measured: tput("ours-tb", "reference"), goal: 2.0, show: ratio, profile: "redis"},
		{what: "Redis, 64 goroutines: ours token bucket Redis CPU per decision / redis_rate's", measured: r.ratio(at64, p, "ours-tb", "redis_rate", "redis-cpu-µs/op"), goal: 0.5, atMost: true, show: ratio, profile: "redis"},
		{what: "Redis, 64 goroutines: ours fixed window throughput / ulule's", measured: tput("ours-fw", "ulule"), goal: 1.5, show: ratio, profile: "redis"},
		{what: "Redis, one goroutine: ours token bucket latency / the reference script's (ns/op)", measured: rt(at1, "ours-tb", "reference"), goal: 1.15, atMost: true, show: ratio, profile: "redis"},
		{what: "Redis, 64 and 512 goroutines: ours' most round trips per decision (every algorithm, both workloads)", measured: r.mostOf(p, "roundtrips/op", 64, 512), goal: 1, atMost: true, show: plain},
		{what: "Redis, one goroutine: ours' round trips per decision, fewest and most (every algorithm, both workloads)", measured: r.mostOf(p, "roundtrips/op", 1), least: r.leastOf(p, "roundtrips/op", 1), goal: 1, exact: true, show: plain},
	}
}

// writeTargets writes the targets' table and returns the missed ones.
func writeTargets(w io.Writer, r *results) []target {
	fmt.Fprintf(w, "| target | measured | goal | |\n|---|---|---|---|\n")
	var missed []target
	for _, t := range targets(r) {
		op, measured := ">=", t.show(t.measured)
		if t.atMost {
			op = "<="
		}
		if t.exact {
			op, measured = "=", t.show(t.least)+" – "+measured
		}
		verdict := "met"
		if !t.pass() {
			verdict = "**missed**, " + t.by()
			missed = append(missed, t)
		}
		fmt.Fprintf(w, "| %s | %s | %s %s | %s |\n", t.what, measured, op, t.show(t.goal), verdict)
	}
	return missed
}

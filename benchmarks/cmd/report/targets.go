package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// The targets, measured, and the README's headline table.

// target is one goal of the issue, measured.
type target struct {
	what     string
	measured float64
	goal     float64
	atMost   bool // measured <= goal passes; else measured >= goal
	show     func(float64) string
	profile  string // the profile that shows what bounds it
}

func (t target) pass() bool {
	if math.IsNaN(t.measured) {
		return false
	}
	if t.atMost {
		return t.measured <= t.goal+1e-9
	}
	return t.measured >= t.goal-1e-9
}

// by says how far a missed target is from its goal.
func (t target) by() string {
	if t.pass() || math.IsNaN(t.measured) {
		return ""
	}
	if t.goal == 0 {
		return fmt.Sprintf("%s over", t.show(t.measured))
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
	tput := func(lib, peer string) float64 { // throughput ratio: peer ns / ours ns
		return r.ratio("RedisParallel", p, peer, lib, "ns/op")
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
		{what: "Redis, 64 goroutines: ours token bucket throughput / reference script", measured: tput("ours-tb", "reference"), goal: 1.0, show: ratio, profile: "redis"},
		{what: "Redis, 64 goroutines: ours token bucket throughput / redis_rate", measured: tput("ours-tb", "redis_rate"), goal: 1.0, show: ratio, profile: "redis"},
		{what: "Redis, 64 goroutines: ours fixed window throughput / ulule", measured: tput("ours-fw", "ulule"), goal: 1.0, show: ratio, profile: "redis"},
		{what: "Redis: ours token bucket round trips per decision", measured: r.med("RedisParallel", p, "ours-tb", "roundtrips/op"), goal: 1, atMost: true, show: plain},
		{what: "Redis: ours fixed window round trips per decision", measured: r.med("RedisParallel", p, "ours-fw", "roundtrips/op"), goal: 1, atMost: true, show: plain},
		{what: "Redis: ours token bucket server µs per decision / reference's (below 1)", measured: r.ratio("RedisParallel", p, "ours-tb", "reference", "server-µs/op"), goal: 1.0, atMost: true, show: ratio, profile: "redis"},
	}
}

// writeTargets writes the targets' table and returns the missed ones.
func writeTargets(w io.Writer, r *results) []target {
	fmt.Fprintf(w, "| target | measured | goal | |\n|---|---|---|---|\n")
	var missed []target
	for _, t := range targets(r) {
		op := ">="
		if t.atMost {
			op = "<="
		}
		verdict := "met"
		if !t.pass() {
			verdict = "**missed**, " + t.by()
			missed = append(missed, t)
		}
		fmt.Fprintf(w, "| %s | %s | %s %s | %s |\n", t.what, t.show(t.measured), op, t.show(t.goal), verdict)
	}
	return missed
}

// headline is the short table for the project README.
func headline(w io.Writer, r *results) {
	p := maxProcs(r)
	ns := func(suite string, procs int, lib string) float64 { return r.med(suite, procs, lib, "ns/op") }
	bare := ns("Middleware", p, "bare")
	// others lists "lib value" for each of libs.
	others := func(libs []string, value func(lib string) float64) string {
		out := make([]string, len(libs))
		for i, lib := range libs {
			out[i] = lib + " " + fmtNum(value(lib))
		}
		return strings.Join(out, ", ")
	}
	inProcess := []string{"sethvargo", "throttled", "echo", "ulule", "tollbooth", "httprate"}
	fmt.Fprintf(w, "| work (this machine, one run) | ratelimit | the others |\n|---|---|---|\n")
	fmt.Fprintf(w, "| one hot key, ns/decision | %s | x/time/rate %s; %s |\n", fmtNum(ns("HotKeySerial", p, "ours")), fmtNum(ns("HotKeySerial", p, "xtimerate")),
		others(inProcess, func(lib string) float64 { return ns("HotKeySerial", p, lib) }))
	fmt.Fprintf(w, "| 100k keys, %d cores, ns/decision | %s | %s |\n", p, fmtNum(ns("ManyKeys", p, "ours")),
		others(inProcess, func(lib string) float64 { return ns("ManyKeys", p, lib) }))
	fmt.Fprintf(w, "| heap per key at 1M keys, bytes | %s | %s |\n", fmtNum(r.med("BytesPerKey", p, "ours", "B/key")),
		others([]string{"httprate", "sethvargo", "throttled", "ulule", "tollbooth", "echo"}, func(lib string) float64 { return r.med("BytesPerKey", p, lib, "B/key") }))
	fmt.Fprintf(w, "| net/http middleware overhead, ns (allocs) | %s (%s) | %s |\n", fmtNum(ns("Middleware", p, "ours")-bare), fmtNum(r.med("Middleware", p, "ours", "allocs/op")),
		others([]string{"httprate", "sethvargo", "ulule", "throttled", "tollbooth"}, func(lib string) float64 { return ns("Middleware", p, lib) - bare }))
	ops := func(lib string) string { return fmtNum(1e9 / ns("RedisParallel", p, lib) / 1000) }
	fmt.Fprintf(w, "| Redis, 64 goroutines, k decisions/s | token bucket %s, fixed window %s | reference script %s, redis_rate %s, ulule %s; ceiling %s |\n",
		ops("ours-tb"), ops("ours-fw"), ops("reference"), ops("redis_rate"), ops("ulule"), ops("ceiling"))
	server := func(lib string) string { return fmtNum(r.med("RedisParallel", p, lib, "server-µs/op")) }
	fmt.Fprintf(w, "| Redis server µs per decision | token bucket %s, fixed window %s | reference %s, redis_rate %s, ulule %s |\n",
		server("ours-tb"), server("ours-fw"), server("reference"), server("redis_rate"), server("ulule"))
}

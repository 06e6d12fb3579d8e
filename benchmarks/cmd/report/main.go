// Command report turns the raw output of the benchmark suites into
// RESULTS.md: a table per suite with each library's median and its ratio to
// the suite's baseline, the targets with their measured ratios, and an SVG
// plot of ns/op per library. run.sh runs it; it needs nothing outside the
// standard library.
//
//	go run ./cmd/report -raw raw.txt -benchstat benchstat.txt -profiles DIR -cmdstats DIR -svg results.svg > RESULTS.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ratelimit-go/ratelimit/benchmarks"
)

// sample is one benchmark line.
type sample struct {
	suite string // BenchmarkHotKeySerial without "Benchmark"
	lib   string
	procs int
	vals  map[string]float64 // unit -> value
}

// key identifies a row of a table.
type key struct {
	suite string
	procs int
	lib   string
}

type results struct {
	order  []key                        // rows in order of first appearance
	values map[key]map[string][]float64 // unit -> samples
}

func parse(r io.Reader) (*results, error) {
	res := &results{values: make(map[key]map[string][]float64)}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		s, ok := parseLine(sc.Text())
		if !ok {
			continue
		}
		k := key{s.suite, s.procs, s.lib}
		m, seen := res.values[k]
		if !seen {
			m = make(map[string][]float64)
			res.values[k] = m
			res.order = append(res.order, k)
		}
		for unit, v := range s.vals {
			m[unit] = append(m[unit], v)
		}
	}
	return res, sc.Err()
}

// parseLine reads "BenchmarkSuite/lib=name-P  N  v unit  v unit ...".
func parseLine(line string) (sample, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return sample{}, false
	}
	name, procs := f[0], 1
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if p, err := strconv.Atoi(name[i+1:]); err == nil {
			name, procs = name[:i], p
		}
	}
	suite, lib, ok := strings.Cut(strings.TrimPrefix(name, "Benchmark"), "/lib=")
	if !ok {
		return sample{}, false
	}
	s := sample{suite: suite, lib: lib, procs: procs, vals: make(map[string]float64)}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return sample{}, false
		}
		s.vals[f[i+1]] = v
	}
	return s, true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is half the range of xs as a fraction of its median.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	m := median(xs)
	if m == 0 {
		return 0
	}
	return (hi - lo) / 2 / m
}

func (r *results) med(suite string, procs int, lib, unit string) float64 {
	m, ok := r.values[key{suite, procs, lib}]
	if !ok {
		return math.NaN()
	}
	return median(m[unit])
}

// paired returns the median over rounds of f(a, b, base) on the samples of
// one round each: round i of every library ran within seconds of the others,
// so slow changes in the machine's load cancel out of each round's ratio.
func (r *results) paired(suite string, procs int, a, b, base string, unit string, f func(a, b, base float64) float64) float64 {
	xa, xb := r.values[key{suite, procs, a}][unit], r.values[key{suite, procs, b}][unit]
	xbase := r.values[key{suite, procs, base}][unit]
	n := min(len(xa), len(xb))
	if base != "" {
		n = min(n, len(xbase))
	}
	if n == 0 {
		return math.NaN()
	}
	ratios := make([]float64, n)
	for i := range n {
		z := 0.0
		if base != "" {
			z = xbase[i]
		}
		ratios[i] = f(xa[i], xb[i], z)
	}
	return median(ratios)
}

// ratio is the median per-round ratio a/b of unit.
func (r *results) ratio(suite string, procs int, a, b, unit string) float64 {
	return r.paired(suite, procs, a, b, "", unit, func(a, b, _ float64) float64 { return a / b })
}

// overheadRatio is the median per-round ratio of a's overhead over base to
// b's, in ns/op.
func (r *results) overheadRatio(suite string, procs int, a, b, base string) float64 {
	return r.paired(suite, procs, a, b, base, "ns/op", func(a, b, z float64) float64 { return (a - z) / (b - z) })
}

// procsRatio is the median per-round ratio of lib's ns/op at procs p to q.
func (r *results) procsRatio(suite, lib string, p, q int) float64 {
	xa, xb := r.values[key{suite, p, lib}]["ns/op"], r.values[key{suite, q, lib}]["ns/op"]
	n := min(len(xa), len(xb))
	if n == 0 {
		return math.NaN()
	}
	ratios := make([]float64, n)
	for i := range n {
		ratios[i] = xa[i] / xb[i]
	}
	return median(ratios)
}

// rows returns the libraries of a suite at procs, in order.
func (r *results) rows(suite string, procs int) []string {
	var libs []string
	for _, k := range r.order {
		if k.suite == suite && k.procs == procs {
			libs = append(libs, k.lib)
		}
	}
	return libs
}

// procsOf returns the GOMAXPROCS values a suite ran at, ascending.
func (r *results) procsOf(suite string) []int {
	var ps []int
	for _, k := range r.order {
		if k.suite == suite && !slices.Contains(ps, k.procs) {
			ps = append(ps, k.procs)
		}
	}
	sort.Ints(ps)
	return ps
}

// suiteSpec says how a suite's table reads.
type suiteSpec struct {
	name     string
	title    string
	baseline string
	overhead bool   // subtract the baseline's ns/op (middleware suites)
	unit     string // the unit the ratio is of; ns/op unless said
	about    string
}

var suites = []suiteSpec{
	{name: "HotKeySerial", title: "One hot key, one goroutine", baseline: "xtimerate",
		about: "`AllowN` on one existing key; the floor is one x/time/rate `Limiter.AllowN(time.Now(), 1)`."},
	{name: "HotKeyParallel", title: "One hot key, every core (b.RunParallel)", baseline: "xtimerate",
		about: "The same key from every goroutine: what one lock costs under contention."},
	{name: "ManyKeys", title: "100,000 keys round-robin (b.RunParallel, -cpu 1,2)", baseline: "sethvargo",
		about: "Existing keys visited in turn from each goroutine; ns/op is wall time per decision across all goroutines, so a library that scales halves it at -cpu 2."},
	{name: "BytesPerKey", title: "Heap per key after 1,000,000 keys", baseline: "sethvargo", unit: "B/key",
		about: "Live heap after `runtime.GC`, one library per process, keys made per request as a server makes them (a library that keeps the key string pays for it)."},
	{name: "Middleware", title: "net/http middleware overhead, headers on", baseline: "bare", overhead: true,
		about: "A no-op handler behind each library's middleware, keyed by client address, writing its rate-limit headers; overhead is ns/op less the bare handler's. The ratio column is overhead against ours."},
	{name: "Gin", title: "Gin: adapters/gin against ulule/limiter's Gin middleware", baseline: "bare", overhead: true,
		about: "A Gin engine with a no-op route; overhead is ns/op less the bare engine's."},
	{name: "Echo", title: "Echo v4: adapters/echo against Echo's middleware.RateLimiter", baseline: "bare", overhead: true,
		about: "`echo` is Echo's RateLimiter on its memory store (it writes no rate-limit headers); `echo-ours` is that middleware on our memory store through `echolimit.NewRateLimiterStore`."},
	{name: "RedisSerial", title: "Redis: latency of one decision, one goroutine", baseline: "reference",
		about: "One real redis-server on loopback, 10,000 keys round-robin. `ceiling` is EVALSHA of a script that returns 1; `reference` is the course's HMGET/HSET/EXPIRE token bucket."},
	{name: "RedisParallel", title: "Redis: throughput at 64 goroutines", baseline: "reference",
		about: "As above from 64 goroutines (b.SetParallelism); ns/op is wall time per decision, so 1e9/ns is decisions per second."},
}

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == math.Trunc(v) && math.Abs(v) < 1e6:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// table writes one suite's table at procs.
func table(w io.Writer, r *results, s suiteSpec, procs int) {
	libs := r.rows(s.name, procs)
	unit := s.unit
	if unit == "" {
		unit = "ns/op"
	}
	base := r.med(s.name, procs, s.baseline, unit)
	var extra []string
	for _, u := range []string{"roundtrips/op", "server-µs/op"} {
		if !math.IsNaN(r.med(s.name, procs, libs[0], u)) {
			extra = append(extra, u)
		}
	}
	head := []string{"library", unit, "±"}
	switch {
	case s.overhead:
		head = append(head, "overhead ns", "overhead vs ours")
	default:
		head = append(head, "vs "+s.baseline)
	}
	head = append(head, extra...)
	if unit != "B/key" {
		head = append(head, "B/op", "allocs/op")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, lib := range libs {
		vals := r.values[key{s.name, procs, lib}]
		v := median(vals[unit])
		name := "`" + lib + "`"
		if strings.HasPrefix(lib, "ours") {
			name = "**" + name + "**"
		}
		row := []string{name, fmtNum(v), fmt.Sprintf("%.0f%%", 100*spread(vals[unit]))}
		if s.overhead {
			if lib == s.baseline {
				row = append(row, "(baseline)", "")
			} else {
				row = append(row, fmtNum(v-base), fmtRatio(r.overheadRatio(s.name, procs, lib, "ours", s.baseline)))
			}
		} else {
			row = append(row, fmtRatio(r.ratio(s.name, procs, lib, s.baseline, unit)))
		}
		for _, u := range extra {
			row = append(row, fmtNum(median(vals[u])))
		}
		if unit != "B/key" {
			row = append(row, fmtNum(median(vals["B/op"])), fmtNum(median(vals["allocs/op"])))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\n_n = %d rounds per row. Values are medians; ratios are medians of the per-round ratios; ± is half the range of the samples over the median._\n\n", len(r.values[key{s.name, procs, libs[0]}][unit]))
}

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

// headline is the short table for the project README.
func headline(w io.Writer, r *results) {
	p := 1
	for _, k := range r.order {
		p = max(p, k.procs)
	}
	ns := func(suite string, procs int, lib string) float64 { return r.med(suite, procs, lib, "ns/op") }
	bare := ns("Middleware", p, "bare")
	fmt.Fprintf(w, "| work (this machine, one run) | ratelimit | the others |\n|---|---|---|\n")
	var peers []string
	for _, lib := range []string{"sethvargo", "throttled", "echo", "ulule", "tollbooth", "httprate"} {
		peers = append(peers, fmt.Sprintf("%s %s", lib, fmtNum(ns("HotKeySerial", p, lib))))
	}
	fmt.Fprintf(w, "| one hot key, ns/decision | %s | x/time/rate %s; %s |\n", fmtNum(ns("HotKeySerial", p, "ours")), fmtNum(ns("HotKeySerial", p, "xtimerate")), strings.Join(peers, ", "))
	peers = peers[:0]
	for _, lib := range []string{"sethvargo", "throttled", "echo", "ulule", "tollbooth", "httprate"} {
		peers = append(peers, fmt.Sprintf("%s %s", lib, fmtNum(ns("ManyKeys", p, lib))))
	}
	fmt.Fprintf(w, "| 100k keys, %d cores, ns/decision | %s | %s |\n", p, fmtNum(ns("ManyKeys", p, "ours")), strings.Join(peers, ", "))
	peers = peers[:0]
	for _, lib := range []string{"httprate", "sethvargo", "throttled", "ulule", "tollbooth", "echo"} {
		peers = append(peers, fmt.Sprintf("%s %s", lib, fmtNum(r.med("BytesPerKey", p, lib, "B/key"))))
	}
	fmt.Fprintf(w, "| heap per key at 1M keys, bytes | %s | %s |\n", fmtNum(r.med("BytesPerKey", p, "ours", "B/key")), strings.Join(peers, ", "))
	peers = peers[:0]
	for _, lib := range []string{"httprate", "sethvargo", "ulule", "throttled", "tollbooth"} {
		peers = append(peers, fmt.Sprintf("%s %s", lib, fmtNum(ns("Middleware", p, lib)-bare)))
	}
	fmt.Fprintf(w, "| net/http middleware overhead, ns (allocs) | %s (%s) | %s |\n", fmtNum(ns("Middleware", p, "ours")-bare), fmtNum(r.med("Middleware", p, "ours", "allocs/op")), strings.Join(peers, ", "))
	ops := func(lib string) string { return fmtNum(1e9 / ns("RedisParallel", p, lib) / 1000) }
	fmt.Fprintf(w, "| Redis, 64 goroutines, k decisions/s | token bucket %s, fixed window %s | reference script %s, redis_rate %s, ulule %s; ceiling %s |\n",
		ops("ours-tb"), ops("ours-fw"), ops("reference"), ops("redis_rate"), ops("ulule"), ops("ceiling"))
	fmt.Fprintf(w, "| Redis server µs per decision | token bucket %s, fixed window %s | reference %s, redis_rate %s, ulule %s |\n",
		fmtNum(r.med("RedisParallel", p, "ours-tb", "server-µs/op")), fmtNum(r.med("RedisParallel", p, "ours-fw", "server-µs/op")),
		fmtNum(r.med("RedisParallel", p, "reference", "server-µs/op")), fmtNum(r.med("RedisParallel", p, "redis_rate", "server-µs/op")), fmtNum(r.med("RedisParallel", p, "ulule", "server-µs/op")))
}

func main() {
	raw := flag.String("raw", "", "raw `go test -bench` output of every round")
	benchstat := flag.String("benchstat", "", "benchstat's summary of the same output, included as it is")
	profiles := flag.String("profiles", "", "directory of pprof -top outputs: hotkey.txt, manykeys.txt, middleware.txt, redis.txt")
	cmdstats := flag.String("cmdstats", "", "directory of per-benchmark INFO commandstats per decision")
	notes := flag.String("notes", "", "hand-written Markdown on what bounds the missed targets, put before the profiles")
	meta := flag.String("meta", "", "Markdown lines about the machine and the run, put at the top")
	svgOut := flag.String("svg", "", "write the plot here")
	listPeers := flag.Bool("list-peers", false, "print the in-process libraries, one per line, and exit (run.sh runs the heap suite once per library)")
	flag.Parse()
	if *listPeers {
		fmt.Println(strings.Join(benchmarks.PeerNames, "\n"))
		return
	}

	f, err := os.Open(*raw)
	if err != nil {
		fail(err)
	}
	r, err := parse(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	if len(r.order) == 0 {
		fail(fmt.Errorf("%s has no benchmark lines", *raw))
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()

	fmt.Fprintf(w, "# Benchmark results\n\nWritten by `benchmarks/run.sh`; do not edit by hand. Every ratio compares libraries measured in the same run, rounds interleaved, so the machine's noise falls on all of them alike. Medians of the rounds.\n\n")
	if *meta != "" {
		b, err := os.ReadFile(*meta)
		if err != nil {
			fail(err)
		}
		w.Write(b)
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "## Targets\n\n| target | measured | goal | |\n|---|---|---|---|\n")
	ts := targets(r)
	var missed []target
	for _, t := range ts {
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
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Headline\n\n")
	headline(w, r)
	fmt.Fprintln(w)

	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, []byte(plot(r)), 0o644); err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "![ns per decision, per library and suite](%s)\n\n", filepath.Base(*svgOut))
	}

	for _, s := range suites {
		for _, procs := range r.procsOf(s.name) {
			title := s.title
			if len(r.procsOf(s.name)) > 1 {
				title += fmt.Sprintf(" — GOMAXPROCS %d", procs)
			}
			fmt.Fprintf(w, "## %s\n\n%s\n\n", title, s.about)
			table(w, r, s, procs)
		}
	}

	if *cmdstats != "" {
		fmt.Fprintf(w, "## Redis: what the server runs per decision (64 goroutines)\n\nFrom INFO commandstats in the last round, per decision: the commands each script calls are counted by Redis beside the EVALSHA that ran them, whose time includes theirs and the Lua around them.\n\n")
		fmt.Fprintf(w, "| library | command | calls/decision | µs/decision |\n|---|---|---|---|\n")
		for _, lib := range r.rows("RedisParallel", maxProcs(r)) {
			b, err := os.ReadFile(filepath.Join(*cmdstats, "BenchmarkRedisParallel_lib-"+lib+".txt"))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				f := strings.Fields(line)
				if len(f) == 3 {
					fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", lib, f[0], f[1], f[2])
				}
			}
		}
		fmt.Fprintln(w)
	}

	if len(missed) > 0 && *profiles != "" {
		fmt.Fprintf(w, "## What bounds the missed targets\n\n")
		if *notes != "" {
			b, err := os.ReadFile(*notes)
			if err != nil {
				fail(err)
			}
			w.Write(b)
			fmt.Fprintln(w)
		}
		done := map[string]bool{}
		for _, t := range missed {
			if t.profile == "" || done[t.profile] {
				continue
			}
			done[t.profile] = true
			b, err := os.ReadFile(filepath.Join(*profiles, t.profile+".txt"))
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "<details><summary>CPU profile of ours, %s (pprof -top)</summary>\n\n```\n%s```\n\n</details>\n\n", profileTitle[t.profile], b)
		}
	}

	if *benchstat != "" {
		b, err := os.ReadFile(*benchstat)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(w, "## benchstat\n\nThe same samples as benchstat summarises them, a table per suite with libraries as columns (`-col /lib`); its \"vs base\" compares each column with the first. With 5 rounds it gives no confidence interval (it needs 6) but still a p-value per comparison.\n\n<details><summary>benchstat output</summary>\n\n```\n%s```\n\n</details>\n", b)
	}
}

var profileTitle = map[string]string{
	"hotkey":     "BenchmarkHotKeySerial/lib=ours",
	"manykeys":   "BenchmarkManyKeys/lib=ours at -cpu 2",
	"middleware": "BenchmarkMiddleware/lib=ours",
	"redis":      "BenchmarkRedisParallel/lib=ours-tb (the client's side; the server's is the commandstats table)",
}

func maxProcs(r *results) int {
	p := 1
	for _, k := range r.order {
		p = max(p, k.procs)
	}
	return p
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

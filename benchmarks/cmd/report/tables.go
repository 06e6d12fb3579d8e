package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// A table per suite: how each reads, and how its numbers are written.

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
	head := []string{"library", unit, "±"}
	switch {
	case s.overhead:
		head = append(head, "overhead ns", "overhead vs ours")
	default:
		head = append(head, "vs "+s.baseline)
	}
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
		if unit != "B/key" {
			row = append(row, fmtNum(median(vals["B/op"])), fmtNum(median(vals["allocs/op"])))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\n_n = %d rounds per row. Values are medians; ratios are medians of the per-round ratios; ± is half the range of the samples over the median._\n\n", len(r.values[key{s.name, procs, libs[0]}][unit]))
}

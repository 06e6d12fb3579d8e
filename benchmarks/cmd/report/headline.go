package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The headline: one table of what a reader compares first, in RESULTS.md
// and, with a line on how it was measured, in the project README.

// peerValue is one other library's figure in a headline row.
type peerValue struct {
	lib  string
	v    float64
	text string
}

// headlineRow is one row: what, ours, the others (fastest first when sorted).
type headlineRow struct {
	what   string
	ours   string
	others []peerValue
	sorted bool
}

func headlineRows(r *results) []headlineRow {
	p := maxProcs(r)
	ns := func(suite, lib string) float64 { return r.med(suite, p, lib, "ns/op") }
	num := func(v float64) string { return fmtNum(math.Round(v)) }
	inProcess := []string{"sethvargo", "throttled", "echo", "ulule", "tollbooth", "httprate"}
	memory := func(what, suite, unit string, libs []string, value func(lib string) float64, ours string) headlineRow {
		row := headlineRow{what: what, ours: ours, sorted: true}
		for _, lib := range libs {
			if v := value(lib); !math.IsNaN(v) {
				row.others = append(row.others, peerValue{lib, v, num(v)})
			}
		}
		return row
	}
	var rows []headlineRow
	if v := ns("HotKeySerial", "ours"); !math.IsNaN(v) {
		rows = append(rows, memory("one hot key (memory)", "HotKeySerial", "ns", append([]string{"xtimerate"}, inProcess...),
			func(lib string) float64 { return ns("HotKeySerial", lib) },
			fmt.Sprintf("%s ns, %s allocs", num(v), fmtNum(r.med("HotKeySerial", p, "ours", "allocs/op")))))
	}
	if v := ns("ManyKeys", "ours"); !math.IsNaN(v) {
		rows = append(rows, memory(fmt.Sprintf("100,000 keys, %d cores", p), "ManyKeys", "ns", inProcess,
			func(lib string) float64 { return ns("ManyKeys", lib) }, num(v)+" ns"))
	}
	if v := r.med("BytesPerKey", p, "ours", "B/key"); !math.IsNaN(v) {
		rows = append(rows, memory("heap per key at 1M keys", "BytesPerKey", "B", inProcess,
			func(lib string) float64 { return r.med("BytesPerKey", p, lib, "B/key") }, num(v)+" B"))
	}
	if bare := ns("Middleware", "bare"); !math.IsNaN(ns("Middleware", "ours")) {
		rows = append(rows, memory("net/http middleware overhead, headers on", "Middleware", "ns", []string{"httprate", "sethvargo", "ulule", "throttled", "tollbooth"},
			func(lib string) float64 { return ns("Middleware", lib) - bare },
			fmt.Sprintf("%s ns, %s allocs", num(ns("Middleware", "ours")-bare), fmtNum(r.med("Middleware", p, "ours", "allocs/op")))))
	}

	// Redis: throughput with Redis CPU and round trips, or latency.
	rate := func(suite, lib string) (float64, string) {
		v := 1e6 / ns(suite, lib)
		trips := r.med(suite, p, lib, "roundtrips/op")
		plural := "s"
		if fmtNum(trips) == "1" {
			plural = ""
		}
		return v, fmt.Sprintf("%sk/s, %s µs Redis CPU, %s round trip%s", strconv.FormatFloat(v, 'f', 1, 64),
			fmtNum(r.med(suite, p, lib, "redis-cpu-µs/op")), fmtNum(trips), plural)
	}
	latency := func(suite, lib string) (float64, string) {
		v := r.med(suite, p, lib, "p50-µs")
		return v, fmt.Sprintf("%s µs", fmtNum(v))
	}
	redis := func(what, suite, ours string, peers []string, value func(suite, lib string) (float64, string)) {
		v, text := value(suite, ours)
		if math.IsNaN(v) {
			return
		}
		// The medians above come from different moments of a noisy
		// machine; the ratio of each round's samples is the comparison.
		base := peers[0]
		if strings.Contains(what, "latency") {
			if ratio := r.ratio(suite, p, ours, base, "p50-µs"); !math.IsNaN(ratio) {
				text += fmt.Sprintf(" (%s the %s's latency)", fmtRatio(ratio), displayName(base))
			}
		} else if ratio := r.ratio(suite, p, base, ours, "ns/op"); !math.IsNaN(ratio) {
			text += fmt.Sprintf(" (%s %s's throughput)", fmtRatio(ratio), displayName(base))
		}
		row := headlineRow{what: what, ours: text}
		for _, lib := range peers {
			if pv, pt := value(suite, lib); !math.IsNaN(pv) {
				row.others = append(row.others, peerValue{lib, pv, pt})
			}
		}
		rows = append(rows, row)
	}
	buckets := []string{"redis_rate", "reference", "throttled"}
	redis("Redis token bucket, 64 goroutines", redisCell(false, "allowed", 64), "ours-tb", buckets, rate)
	redis("Redis token bucket, 512 goroutines", redisCell(false, "allowed", 512), "ours-tb", buckets, rate)
	redis("Redis token bucket, one at a time (p50 latency)", redisCell(false, "allowed", 1), "ours-tb", []string{"reference", "redis_rate", "throttled"}, latency)
	redis("Redis token bucket, all denied, 64 goroutines", redisCell(false, "denied", 64), "ours-tb", buckets, rate)
	// What a user gets: the same token bucket through a Limiter (time
	// budget, breaker, deny cache), beside the store alone.
	through := []string{"redis_rate", "ours-tb"}
	redis("Redis token bucket through a Limiter, 64 goroutines", redisCell(false, "allowed", 64), "ours-limiter", through, rate)
	redis("Redis token bucket through a Limiter, one at a time (p50 latency)", redisCell(false, "allowed", 1), "ours-limiter", through, latency)
	redis("Redis fixed window, 64 goroutines", redisCell(false, "allowed", 64), "ours-fw", []string{"ulule"}, rate)
	redis("Redis Cluster (3 masters) token bucket, 64 goroutines", redisCell(true, "allowed", 64), "ours-tb", []string{"redis_rate", "reference"}, rate)
	return rows
}

// writeHeadline writes the headline table.
func writeHeadline(w io.Writer, rows []headlineRow) {
	fmt.Fprintf(w, "| per decision | ratelimit | the others |\n|---|---|---|\n")
	for _, row := range rows {
		others := row.others
		if row.sorted {
			sort.SliceStable(others, func(i, j int) bool { return others[i].v < others[j].v })
		}
		parts := make([]string, len(others))
		for i, o := range others {
			parts[i] = displayName(o.lib) + " " + o.text
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", row.what, row.ours, strings.Join(parts, "; "))
	}
}

// headline is RESULTS.md's headline.
func headline(w io.Writer, r *results) { writeHeadline(w, headlineRows(r)) }

// readme is the project README's benchmark section body, from the same rows.
func readme(w io.Writer, r *results, rounds int) {
	fmt.Fprintf(w, "Measured here against the libraries a Go team would pick instead (%d\nshared cores; one run of `bash benchmarks/run.sh`, %d interleaved rounds,\nmedians; read the ratios, not the absolute numbers):\n\n", maxProcs(r), rounds)
	writeHeadline(w, headlineRows(r))
	fmt.Fprintf(w, "\nTables, the targets (met and missed, with what bounds each) and a plot:\n[benchmarks/RESULTS.md](benchmarks/RESULTS.md).\n")
}

// displayName is how a library reads in the headline.
func displayName(lib string) string {
	switch lib {
	case "xtimerate":
		return "x/time/rate"
	case "reference":
		return "reference script"
	case "ours-tb":
		return "the store alone"
	}
	return lib
}

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The Redis suites: a table per workload and goroutine count, and what the
// server ran per decision.

// redisBase is the library every Redis ratio is against.
const redisBase = "redis_rate"

// redisCell names the suite of one workload at g goroutines, as the
// benchmarks name it: Redis/allowed/g=64, RedisCluster/allowed/g=64.
func redisCell(cluster bool, work string, g int) string {
	s := "Redis"
	if cluster {
		s = "RedisCluster"
	}
	return fmt.Sprintf("%s/%s/g=%d", s, work, g)
}

// redisSuites returns the Redis suites of a run in order of appearance.
func redisSuites(r *results) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range r.order {
		if strings.HasPrefix(k.suite, "Redis") && strings.Contains(k.suite, "/g=") && !seen[k.suite] {
			seen[k.suite] = true
			out = append(out, k.suite)
		}
	}
	return out
}

// redisTitle reads a suite name back as a title.
func redisTitle(suite string) string {
	parts := strings.Split(suite, "/")
	if len(parts) != 3 {
		return suite
	}
	where := "Redis"
	if parts[0] == "RedisCluster" {
		where = "Redis Cluster (3 masters)"
	}
	g, _ := strconv.Atoi(strings.TrimPrefix(parts[2], "g="))
	goroutines := fmt.Sprintf("%d goroutines", g)
	if g == 1 {
		goroutines = "one goroutine"
	}
	return fmt.Sprintf("%s, %s, %s", where, parts[1], goroutines)
}

const redisAbout = "10,000 keys round-robin, a plain go-redis client per library with the same options. " +
	"k/s is decisions per second (1e9 / ns/op); p50 and p99 are the latency of one decision; " +
	"Redis CPU is the INFO cpu delta (used_cpu_sys + used_cpu_user, networking included) over the decisions; " +
	"round trips are the client's socket writes per decision; commands are INFO total_commands_processed per decision, " +
	"the commands a script calls included. Ratios are against " + redisBase + ", per round: throughput above 1 and CPU below 1 are better."

// redisTables writes a table per Redis suite.
func redisTables(w io.Writer, r *results) {
	p := maxProcs(r)
	for _, suite := range redisSuites(r) {
		fmt.Fprintf(w, "## %s\n\n%s\n\n", redisTitle(suite), redisAbout)
		head := []string{"library", "k/s", "±", "vs " + redisBase, "p50 µs", "p99 µs", "Redis CPU µs", "CPU vs " + redisBase, "round trips", "commands", "allocs/op"}
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		libs := r.rows(suite, p)
		for _, lib := range libs {
			vals := r.values[key{suite, p, lib}]
			name := "`" + lib + "`"
			if strings.HasPrefix(lib, "ours") {
				name = "**" + name + "**"
			}
			row := []string{
				name,
				fmtNum(1e6 / median(vals["ns/op"])),
				fmt.Sprintf("%.0f%%", 100*spread(vals["ns/op"])),
				fmtRatio(r.ratio(suite, p, redisBase, lib, "ns/op")),
				fmtNum(median(vals["p50-µs"])),
				fmtNum(median(vals["p99-µs"])),
				fmtNum(median(vals["redis-cpu-µs/op"])),
				fmtRatio(r.ratio(suite, p, lib, redisBase, "redis-cpu-µs/op")),
				fmtNum(median(vals["roundtrips/op"])),
				fmtNum(median(vals["cmds/op"])),
				fmtNum(median(vals["allocs/op"])),
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
		if len(libs) > 0 {
			fmt.Fprintf(w, "\n_n = %d rounds per row. Values are medians; ratios are medians of the per-round ratios; ± is half the range of the samples over the median._\n\n", len(r.values[key{suite, p, libs[0]}]["ns/op"]))
		}
	}
}

// cmdstatsTable writes what the server ran per decision in the allowed
// workload at 64 goroutines, from the files the benchmarks wrote with
// -cmdstats (the last round's).
func cmdstatsTable(w io.Writer, r *results, dir string) {
	suite := redisCell(false, "allowed", 64)
	libs := r.rows(suite, maxProcs(r))
	if len(libs) == 0 {
		return
	}
	fmt.Fprintf(w, "## Redis: what the server runs per decision (allowed, 64 goroutines)\n\nFrom INFO commandstats in the last round, per decision: the commands each script calls are counted by Redis beside the EVALSHA that ran them, whose time includes theirs and the Lua around them. Command time excludes the networking that Redis CPU above includes.\n\n")
	fmt.Fprintf(w, "| library | command | calls/decision | µs/decision |\n|---|---|---|---|\n")
	for _, lib := range libs {
		file := strings.NewReplacer("/", "_", "=", "-").Replace("Benchmark"+suite+"/lib="+lib) + ".txt"
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", lib, f[0], f[1], f[2])
			}
		}
	}
	fmt.Fprintln(w)
}

// mostOf returns the largest median of unit over ours' rows of the
// single-node Redis suites at the goroutine counts gs, both workloads.
func (r *results) mostOf(procs int, unit string, gs ...int) float64 {
	return r.oursExtreme(procs, unit, gs, math.Max)
}

// leastOf is mostOf's smallest.
func (r *results) leastOf(procs int, unit string, gs ...int) float64 {
	return r.oursExtreme(procs, unit, gs, math.Min)
}

func (r *results) oursExtreme(procs int, unit string, gs []int, pick func(a, b float64) float64) float64 {
	v, found := 0.0, false
	for _, work := range []string{"allowed", "denied"} {
		for _, g := range gs {
			suite := redisCell(false, work, g)
			for _, lib := range r.rows(suite, procs) {
				if !strings.HasPrefix(lib, "ours") {
					continue
				}
				m := r.med(suite, procs, lib, unit)
				if math.IsNaN(m) {
					continue
				}
				if !found {
					v, found = m, true
				}
				v = pick(v, m)
			}
		}
	}
	if !found {
		return math.NaN()
	}
	return v
}

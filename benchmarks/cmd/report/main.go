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
	"os"
	"path/filepath"
	"strings"

	"github.com/ratelimit-go/ratelimit/benchmarks"
)

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

	fmt.Fprintf(w, "## Targets\n\n")
	missed := writeTargets(w, r)
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

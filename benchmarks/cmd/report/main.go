// Command report turns the raw output of the benchmark suites into
// RESULTS.md: a table per suite with each library's median and its ratio to
// the suite's baseline, the targets with their measured ratios, and an SVG
// plot of ns/op per library. run.sh runs it; it needs nothing outside the
// standard library.
//
//	go run ./cmd/report -raw raw.txt -benchstat benchstat.txt -profiles DIR -cmdstats DIR -svg results.svg -readme table.md -rounds 5 > RESULTS.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	readmeOut := flag.String("readme", "", "write the project README's benchmark table here (run.sh puts it between the README's markers)")
	rounds := flag.Int("rounds", 0, "the rounds of the run, for the README's table")
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
	if *readmeOut != "" {
		var b strings.Builder
		readme(&b, r, *rounds)
		if err := os.WriteFile(*readmeOut, []byte(b.String()), 0o644); err != nil {
			fail(err)
		}
	}

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

	redisTables(w, r)
	if *cmdstats != "" {
		cmdstatsTable(w, r, *cmdstats)
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
		var names []string
		for _, t := range missed {
			if t.profile != "" && !slices.Contains(names, t.profile) {
				names = append(names, t.profile)
				if t.profile == "redis" {
					names = append(names, "redis-server")
				}
			}
		}
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(*profiles, name+".txt"))
			if err != nil || len(b) == 0 {
				continue
			}
			fmt.Fprintf(w, "<details><summary>CPU profile: %s</summary>\n\n```\n%s```\n\n</details>\n\n", profileTitle[name], b)
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
	"hotkey":       "BenchmarkHotKeySerial/lib=ours",
	"manykeys":     "BenchmarkManyKeys/lib=ours at -cpu 2",
	"middleware":   "BenchmarkMiddleware/lib=ours",
	"redis":        "the client's side of BenchmarkRedis/allowed/g=64/lib=ours-tb (pprof -top)",
	"redis-server": "redis-server while BenchmarkRedis/allowed/g=64/lib=ours-tb runs (perf report, self time)",
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

package main

import (
	"bufio"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The samples of a run, and the medians and ratios read from them.

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

func maxProcs(r *results) int {
	p := 1
	for _, k := range r.order {
		p = max(p, k.procs)
	}
	return p
}

package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// plotPanels are the suites the plot shows, one panel each, with the
// GOMAXPROCS to show (0: the largest the suite ran at).
var plotPanels = []struct {
	suite string
	procs int
	title string
}{
	{"HotKeySerial", 0, "one hot key, serial"},
	{"HotKeyParallel", 0, "one hot key, parallel"},
	{"ManyKeys", 0, "100,000 keys, parallel"},
	{"Middleware", 0, "net/http middleware + no-op handler"},
	{"Gin", 0, "Gin engine + no-op route"},
	{"Echo", 0, "Echo server + no-op route"},
	{"Redis/allowed/g=1", 0, "Redis, allowed, one goroutine"},
	{"Redis/allowed/g=64", 0, "Redis, allowed, 64 goroutines"},
	{"Redis/allowed/g=512", 0, "Redis, allowed, 512 goroutines"},
	{"Redis/denied/g=64", 0, "Redis, denied, 64 goroutines"},
	{"RedisCluster/allowed/g=64", 0, "Redis Cluster, allowed, 64 goroutines"},
}

// plot draws ns/op per library as horizontal bars, a panel per suite, each
// panel on its own linear scale; ours in another colour.
func plot(r *results) string {
	const (
		width  = 860
		left   = 130 // library names
		right  = 90  // values
		rowH   = 18
		titleH = 26
		gap    = 14
	)
	var body strings.Builder
	y := 10
	for _, p := range plotPanels {
		procs := p.procs
		if procs == 0 {
			ps := r.procsOf(p.suite)
			if len(ps) == 0 {
				continue
			}
			procs = ps[len(ps)-1]
		}
		libs := r.rows(p.suite, procs)
		if len(libs) == 0 {
			continue
		}
		maxV := 0.0
		for _, lib := range libs {
			maxV = math.Max(maxV, r.med(p.suite, procs, lib, "ns/op"))
		}
		fmt.Fprintf(&body, `<text x="10" y="%d" class="t">%s (ns/op, GOMAXPROCS %d)</text>`+"\n", y+16, html.EscapeString(p.title), procs)
		y += titleH
		for _, lib := range libs {
			v := r.med(p.suite, procs, lib, "ns/op")
			w := 0.0
			if maxV > 0 && !math.IsNaN(v) {
				w = v / maxV * float64(width-left-right)
			}
			class := "b"
			if strings.HasPrefix(lib, "ours") {
				class = "o"
			} else if lib == "bare" || lib == "xtimerate" || lib == "ceiling" || lib == "reference" {
				class = "f"
			}
			fmt.Fprintf(&body, `<text x="%d" y="%d" class="l">%s</text>`, left-6, y+13, html.EscapeString(lib))
			fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" class="%s"/>`, left, y+2, math.Max(w, 1), rowH-4, class)
			fmt.Fprintf(&body, `<text x="%.1f" y="%d" class="v">%s</text>`+"\n", float64(left)+w+5, y+13, fmtNum(v))
			y += rowH
		}
		y += gap
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">
<style>.t{font-weight:bold;font-size:13px}.l{text-anchor:end}.v{fill:#333}.o{fill:#d9480f}.b{fill:#4c6ef5}.f{fill:#adb5bd}</style>
<rect width="100%%" height="100%%" fill="white"/>
%s</svg>
`, width, y, width, y, body.String())
}

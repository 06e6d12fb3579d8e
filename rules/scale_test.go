package rules_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestManyRulesCostLittleHeap: a handler of 2,000 rules holds less than
// 10 KB of heap a rule (each held about 130 KB when every rule's limiter
// had tables of its own), and its rules still decide.
func TestManyRulesCostLittleHeap(t *testing.T) {
	const n = 2000
	var file strings.Builder
	file.WriteString("rules:\n")
	for i := range n {
		fmt.Fprintf(&file, "  - {name: r%d, match: \"GET /p%d/\", rate: 2, period: 1m}\n", i, i)
	}
	store := memory.New()
	defer store.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cfg, err := rules.Parse([]byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := rules.NewHandler(cfg, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 10<<10 {
		t.Fatalf("a rule holds %d bytes of heap, want at most 10 KB", per)
	}
	check(t, "rule r1999", do(h, 3, "GET", "/p1999/x", nil), 404, 404, 429)
}

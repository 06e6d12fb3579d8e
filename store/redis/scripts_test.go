package redisstore

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestScriptsAreComposedOfTheirFiles: every script, binary or strings, is
// its encoding line and then its recipe's files, whole; the two variants
// differ in that line only; every Lua file is in some script (but
// inflight.lua, the in-flight slots' script, whole in one file).
func TestScriptsAreComposedOfTheirFiles(t *testing.T) {
	recipeOf := map[string][]string{
		"batch.lua": recipes.batch, "node.lua": recipes.node, "multi.lua": recipes.multi,
		"reserve.lua": recipes.reserve, "refund.lua": recipes.refund,
	}
	for i, name := range []string{"bucket.lua", "window.lua", "swindow.lua", "log.lua"} {
		recipeOf[name] = recipes.one[i]
	}
	used := map[string]bool{"inflight.lua": true}
	for _, set := range []struct {
		name     string
		scripts  *scriptSet
		encoding string
	}{{"binary", &detected, binaryEncoding}, {"strings", &stringsOnly, stringEncoding}} {
		for _, sc := range set.scripts.all() {
			recipe, ok := recipeOf[sc.name]
			if !ok {
				t.Fatalf("%s: script %s has no recipe", set.name, sc.name)
			}
			want := set.encoding
			if sc.name == "node.lua" {
				want = nodeFlags + want
			}
			for _, piece := range recipe {
				if strings.HasSuffix(piece, ".lua") {
					used[piece] = true
					piece = lua(piece)
				}
				want += piece
			}
			if sc.source != want {
				t.Errorf("%s: %s is not its encoding line and its files", set.name, sc.name)
			}
			body, ok := strings.CutPrefix(strings.TrimPrefix(sc.source, nodeFlags), set.encoding)
			if !ok || strings.Contains(body, "local struct") {
				t.Errorf("%s: %s defines struct other than on its first line", set.name, sc.name)
			}
		}
	}
	files, err := fs.Glob(luaFiles, "*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded Lua files: %v, %v", files, err)
	}
	for _, f := range files {
		if !used[f] {
			t.Errorf("%s is in no script", f)
		}
	}
}

// TestLuaIsWrittenOnce: no Lua function is defined in two files (a second
// copy of a decision or a decoding would drift from the first), and only
// the algorithms' files read or write a state's encoding, in their
// decoding and encoding functions.
func TestLuaIsWrittenOnce(t *testing.T) {
	files, _ := fs.Glob(luaFiles, "*.lua")
	defined := map[string]string{}
	// read.lua and node.lua are the two ways batch.lua reads its keys: one
	// or the other is in a script, never both.
	alternatives := map[string]bool{"read.lua": true, "node.lua": true}
	function := regexp.MustCompile(`(?m)^local function (\w+)`)
	encodes := regexp.MustCompile(`struct\.(un)?pack\('<B|string\.match\(v,`)
	owners := map[string]bool{"bucket.lua": true, "window.lua": true, "swindow.lua": true}
	for _, f := range files {
		src := lua(f)
		for _, m := range function.FindAllStringSubmatch(src, -1) {
			if other, ok := defined[m[1]]; ok && !(alternatives[other] && alternatives[f]) {
				t.Errorf("function %s is defined in %s and in %s", m[1], other, f)
			}
			defined[m[1]] = f
		}
		// The functions of the file, each with its text up to the next one.
		starts := function.FindAllStringSubmatchIndex(src, -1)
		for i, s := range starts {
			end := len(src)
			if i+1 < len(starts) {
				end = starts[i+1][0]
			}
			name := src[s[2]:s[3]]
			if !encodes.MatchString(src[s[0]:end]) {
				continue
			}
			if !owners[f] || !(strings.HasPrefix(name, "decode") || strings.HasPrefix(name, "encode")) {
				t.Errorf("%s: %s reads or writes a state's encoding itself; use the algorithm's decode and encode functions", f, name)
			}
		}
		if len(starts) > 0 && encodes.MatchString(src[:starts[0][0]]) {
			t.Errorf("%s: a state's encoding outside any function", f)
		}
	}
	for _, name := range []string{"decodeBucket", "encodeBucket", "refill", "bucket", "book", "decodeWindow", "encodeWindow", "window", "decodeSliding", "encodeSliding", "swindow", "slidinglog", "one", "multi"} {
		if defined[name] == "" {
			t.Errorf("function %s is defined nowhere", name)
		}
	}
}

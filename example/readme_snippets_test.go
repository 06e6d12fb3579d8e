package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeSnippetsCompile extracts every Go block of README.md and
// type-checks it with go vet, each as a package of its own, so that the
// README cannot drift from the API: every block must be a complete file,
// imports included.
func TestReadmeSnippetsCompile(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(data))
	if len(blocks) < 5 {
		t.Fatalf("found %d Go blocks in README.md, want the snippets", len(blocks))
	}
	// A directory starting with "." inside this module, which requires
	// every module a snippet imports: their packages resolve, and ./...
	// never sees it.
	dir, err := os.MkdirTemp(".", ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	for i, b := range blocks {
		if !strings.HasPrefix(b, "package ") {
			t.Errorf("README Go block %d does not start with a package clause:\n%s", i+1, b)
			continue
		}
		name := "main.go"
		if strings.Contains(b, "\nfunc Test") {
			name = "snippet_test.go"
		}
		sub := filepath.Join(dir, "snippet"+string(rune('a'+i)))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(sub))
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README snippets do not compile: %v\n%s", err, out)
	}
}

// goBlocks returns the contents of the ```go fences of a Markdown text.
func goBlocks(md string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(md, "\n```go\n")
		if !ok {
			return blocks
		}
		block, after, ok := strings.Cut(rest, "\n```")
		if !ok {
			return blocks
		}
		blocks = append(blocks, block+"\n")
		md = after
	}
}

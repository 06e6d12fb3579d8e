package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// transcript is a block of the README that shows commands ("$ ...") and
// what each prints.
type transcript struct {
	commands []string
	outputs  []string
}

// transcripts returns the README's blocks of commands against the example.
func transcripts(md string) []transcript {
	var out []transcript
	for _, block := range strings.Split(md, "\n```\n")[1:] {
		if !strings.HasPrefix(block, "$ ") || !strings.Contains(block, "localhost:8080") {
			continue
		}
		var tr transcript
		for _, line := range strings.Split(block, "\n") {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				tr.commands = append(tr.commands, cmd)
				tr.outputs = append(tr.outputs, "")
				continue
			}
			tr.outputs[len(tr.outputs)-1] += line + "\n"
		}
		out = append(out, tr)
	}
	return out
}

// dateLine matches a Date header, which says when the command ran.
var dateLine = regexp.MustCompile(`(?m)^Date: .*$`)

// normalize makes outputs comparable: no trailing spaces or newlines (a
// curl -w loop ends without one), and any Date.
func normalize(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return dateLine.ReplaceAllString(strings.TrimRight(strings.Join(lines, "\n"), "\n"), "Date: (any)")
}

// TestReadmeTranscripts runs every command the README shows against the
// example (the built-in routes on the memory store, its clock standing
// still, so that every number is the one a fast reader sees) with bash and
// curl, and compares what each prints with what the README says it
// prints. Each block gets a server of its own; the commands of a block run
// in order, as a reader types them.
func TestReadmeTranscripts(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the README's commands cannot run", tool)
		}
	}
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	trs := transcripts(string(data))
	if len(trs) < 2 {
		t.Fatalf("found %d transcripts in README.md, want the curl sessions", len(trs))
	}
	for _, tr := range trs {
		t.Run(tr.commands[0], func(t *testing.T) {
			s, err := app(config{store: frozenStore(t), adminToken: testToken})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s.handler)
			defer srv.Close()
			addr := strings.TrimPrefix(srv.URL, "http://")
			for i, cmd := range tr.commands {
				c := exec.Command("bash", "-c", strings.ReplaceAll(cmd, "localhost:8080", addr))
				c.Env = append(os.Environ(), "RATELIMIT_ADMIN_TOKEN="+testToken)
				var stdout, stderr bytes.Buffer
				c.Stdout, c.Stderr = &stdout, &stderr
				if err := c.Run(); err != nil {
					t.Fatalf("$ %s: %v\n%s", cmd, err, stderr.String())
				}
				if got, want := normalize(stdout.String()), normalize(tr.outputs[i]); got != want {
					t.Errorf("$ %s\nprints:\n%s\nthe README shows:\n%s", cmd, got, want)
				}
			}
		})
	}
}

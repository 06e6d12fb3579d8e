package rls

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRefusesBadFiles(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // in the error: file, line, field
	}{
		{"a syntax error", "domain: d\ndescriptors:\n  - key: [", []string{"config/bad.yaml", "line 3"}},
		{"an unknown key", "domain: d\ndescriptors:\n  - key: a\n    rate_limt: {unit: second}\n", []string{"config/bad.yaml:4", "descriptors[0].rate_limt", "unknown key"}},
		{"an unknown unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n", []string{"config/bad.yaml:5", "unit", "fortnight"}},
		{"an unknown algorithm", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, algorithm: leaky}\n", []string{"config/bad.yaml:4", "algorithm", "leaky"}},
		{"an empty domain", "descriptors:\n  - key: a\n", []string{"config/bad.yaml:1", "domain"}},
		{"a descriptor without key", "domain: d\ndescriptors:\n  - value: a\n", []string{"config/bad.yaml:3", "key", "empty key"}},
		{"a duplicate descriptor", "domain: d\ndescriptors:\n  - key: a\n  - key: a\n", []string{"config/bad.yaml:4", "duplicate descriptor composite key 'd.a'"}},
		{"a unit when unlimited", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: second}\n", []string{"config/bad.yaml:4", "unit"}},
		{"share_threshold without a wildcard", "domain: d\ndescriptors:\n  - key: a\n    value: b\n    share_threshold: true\n", []string{"config/bad.yaml:3", "share_threshold"}},
		{"a timezone on an hour", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: hour, requests_per_unit: 1, timezone: Europe/Berlin}\n", []string{"config/bad.yaml:4", "timezone"}},
		{"a wrong type", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: hour, requests_per_unit: many}\n", []string{"config/bad.yaml", "line 4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFiles([]File{{Name: "config/bad.yaml", Data: []byte(c.yaml)}}, false)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want an ErrConfig", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: does not name %q", err, w)
				}
			}
		})
	}
}

func TestLoadDomainsOfSeveralFiles(t *testing.T) {
	a := File{Name: "a.yaml", Data: []byte("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1}\n")}
	b := File{Name: "b.yaml", Data: []byte("domain: d\ndescriptors:\n  - key: b\n    rate_limit: {unit: second, requests_per_unit: 1}\n")}
	if _, err := LoadFiles([]File{a, b}, false); err == nil || !strings.Contains(err.Error(), "b.yaml") {
		t.Errorf("two files of one domain: %v, want an error naming b.yaml", err)
	}
	c, err := LoadFiles([]File{a, b}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b"} {
		if r, _ := c.lookup("d", desc(key+"=x")); r == nil {
			t.Errorf("merged domain lacks %s", key)
		}
	}
	if _, err := LoadFiles([]File{a, a}, true); err == nil {
		t.Error("merging a descriptor twice was accepted")
	}
}

func TestLoadDirReadsEveryFileRecursively(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one.yaml", "domain: one\n")
	write("sub/two.yml", "domain: two\n")
	write(".hidden", "domain: hidden\n")
	c, err := LoadDir(dir, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Domains(), ","); got != "one,two" {
		t.Errorf("domains %s, want one,two", got)
	}
	c, err = LoadDir(dir, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Domains(), ","); got != "hidden,one,two" {
		t.Errorf("domains %s with dot files, want hidden,one,two", got)
	}
	if c, err := LoadDir(filepath.Join(dir, "missing"), false, false); err != nil || len(c.Domains()) != 0 {
		t.Errorf("a missing directory: %v, %v; want an empty config", c, err)
	}
}

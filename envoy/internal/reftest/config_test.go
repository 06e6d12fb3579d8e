package reftest

import (
	"os"
	"path/filepath"
	"testing"
)

// configFiles are the descriptor files both services read: one domain a
// file, every feature the reference knows.
var configFiles = map[string]string{
	"multi.yaml": `
domain: multi
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: path
    value: /login
    rate_limit: {unit: day, requests_per_unit: 2}
  - key: path
    rate_limit: {unit: week, requests_per_unit: 4}
`,
	"nested.yaml": `
domain: nested
descriptors:
  - key: tenant
    value: acme
    rate_limit: {unit: hour, requests_per_unit: 4}
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 2}
      - key: user
        value: admin
        rate_limit: {unit: month, requests_per_unit: 3}
  - key: tenant
    descriptors:
      - key: user
        rate_limit: {unit: year, requests_per_unit: 1}
`,
	"wild.yaml": `
domain: wild
descriptors:
  - key: path
    value: /api/v2/*
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: path
    value: /api/*
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: path
    value: /api/exact
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: shared
    value: s-*
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 2}
`,
	"modes.yaml": `
domain: modes
descriptors:
  - key: free
    rate_limit: {unlimited: true}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: quota
    quota_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: base
    rate_limit: {name: base, unit: hour, requests_per_unit: 1}
  - key: premium
    rate_limit:
      unit: hour
      requests_per_unit: 3
      replaces:
        - name: base
  - key: zero
    rate_limit: {unit: hour, requests_per_unit: 0}
`,
	"warm.yaml": `
domain: warm
descriptors:
  - key: k
    rate_limit: {unit: hour, requests_per_unit: 100}
`,
	"units.yaml": `
domain: units
descriptors:
  - key: s
    rate_limit: {unit: second, requests_per_unit: 2}
  - key: m
    rate_limit: {unit: minute, requests_per_unit: 2}
`,
}

// writeRuntime writes files into a new runtime root's config directory
// (RUNTIME_ROOT=root, RUNTIME_SUBDIRECTORY=ratelimit) and returns root.
func writeRuntime(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "ratelimit", "config"), files)
	return root
}

// writeFiles writes each file into dir, each through a rename so that a
// watcher never sees half a file.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		tmp := filepath.Join(filepath.Dir(dir), "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

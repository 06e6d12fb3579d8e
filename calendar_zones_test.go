package ratelimit_test

import (
	"archive/zip"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The zones the calendar oracle (calendar_oracle_test.go) compares.

// tzZone is a zone of the tz database, from one source.
type tzZone struct {
	source string // "zoneinfo.zip" or "LoadLocation"
	loc    *time.Location
}

// tzZones are every zone of the Go runtime's tz database
// (GOROOT/lib/time/zoneinfo.zip, the data time/tzdata embeds: compact
// files whose rule strings take over from 2008 on for many zones), each
// loaded from it and again by time.LoadLocation (the system's files where
// there are some: transitions listed until 2037). Without the zip, the
// names are those of /usr/share/zoneinfo.
func tzZones(t *testing.T) []tzZone {
	t.Helper()
	var zones []tzZone
	var names []string
	if root, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if r, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip")); err == nil {
			defer r.Close()
			for _, f := range r.File {
				if strings.HasSuffix(f.Name, "/") {
					continue
				}
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatal(err)
				}
				loc, err := time.LoadLocationFromTZData(f.Name, data)
				if err != nil {
					t.Fatalf("%s in zoneinfo.zip: %v", f.Name, err)
				}
				zones, names = append(zones, tzZone{"zoneinfo.zip", loc}), append(names, f.Name)
			}
		}
	}
	if len(names) == 0 {
		dir := "/usr/share/zoneinfo"
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(path, ".") {
				if rel, _ := filepath.Rel(dir, path); rel != "" && rel[0] >= 'A' && rel[0] <= 'Z' {
					names = append(names, rel)
				}
			}
			return nil
		})
	}
	if len(names) < 300 {
		t.Fatalf("found %d zone names, want the tz database's (about 600)", len(names))
	}
	for _, name := range names {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("LoadLocation(%q): %v", name, err)
		}
		zones = append(zones, tzZone{"LoadLocation", loc})
	}
	return zones
}

// alternateSources keeps each zone of zones once: the first zone from its
// first source, the next from its second, and so on, so that both kinds of
// data (rule strings, listed transitions) are compared, on half the zones
// each. A zone that one source alone has is kept.
func alternateSources(zones []tzZone) []tzZone {
	sources := map[string]int{}
	for _, z := range zones {
		sources[z.loc.String()]++
	}
	order, seen := map[string]int{}, map[string]int{}
	var kept []tzZone
	for _, z := range zones {
		name := z.loc.String()
		if _, ok := order[name]; !ok {
			order[name] = len(order)
		}
		if seen[name] == order[name]%sources[name] {
			kept = append(kept, z)
		}
		seen[name]++
	}
	return kept
}

package ratelimit

import (
	"archive/zip"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"
)

// TestSameRules: zones with the same rules are the same zone, whether or
// not their data is equal byte for byte; zones that differ are not.
func TestSameRules(t *testing.T) {
	load := func(name string) *time.Location {
		t.Helper()
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	berlin := load("Europe/Berlin")
	for _, c := range []struct {
		name string
		a, b *time.Location
		same bool
	}{
		{"two loads of one zone", berlin, load("Europe/Berlin"), true},
		{"one zone from the Go runtime's data and from LoadLocation", goroot(t, "America/Chicago"), load("America/Chicago"), true},
		{"one zone from two sources, with a leap year's end in its rule string", goroot(t, "Africa/Cairo"), load("Africa/Cairo"), true},
		{"two fixed zones alike", time.FixedZone("X", 3600), time.FixedZone("X", 3600), true},
		{"a fixed zone named like a real one", berlin, time.FixedZone("Europe/Berlin", 3600), false},
		{"two real zones", berlin, load("Europe/Paris"), false},
		{"zones that part in 2011", load("Pacific/Apia"), load("Pacific/Pago_Pago"), false},
		{"zones that part in 2011, from the Go runtime's data", goroot(t, "Pacific/Apia"), load("Pacific/Pago_Pago"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameRules(c.a, c.b); got != c.same {
				t.Fatalf("sameRules(%v, %v) = %v, want %v", c.a, c.b, got, c.same)
			}
		})
	}
}

// goroot loads zone name from the Go runtime's zoneinfo.zip: compact data
// that leaves more to the zone's rule string than the system's files.
func goroot(t *testing.T, name string) *time.Location {
	t.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	r, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

package reftest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Each version of the reload test's file: year windows, which no run
// straddles in practice, so that counts carry across reloads.
const (
	reloadV1 = `
domain: reload
descriptors:
  - key: k
    rate_limit: {unit: year, requests_per_unit: 2}
`
	reloadV2 = `
domain: reload
descriptors:
  - key: k
    rate_limit: {unit: year, requests_per_unit: 5}
  - key: n
    rate_limit: {unit: year, requests_per_unit: 1}
`
	// An unknown key: both refuse the file and keep the rules in force.
	reloadBad = `
domain: reload
descriptors:
  - key: k
    rate_limit: {unit: year, requests_per_unit: 9, bogus: 1}
`
	// unit_multiplier: ratelimitd's extension, a key the reference refuses.
	reloadMultiplier = `
domain: reload
descriptors:
  - key: k
    rate_limit: {unit: day, requests_per_unit: 7, unit_multiplier: 365}
`
)

// TestReload swaps the rules under both services, by the RUNTIME_ROOT
// symlink (RUNTIME_WATCH_ROOT=true) and by a file of the app directory
// (false), and asserts that both take a good file, keeping the counts of
// their descriptors, and both refuse a bad one, keeping their rules; and,
// as the README documents, that only ratelimitd takes unit_multiplier.
func TestReload(t *testing.T) {
	single := gate(t)
	bins := build(t)
	srv := servers(single)[0]
	for _, watchRoot := range []bool{true, false} {
		t.Run("RUNTIME_WATCH_ROOT="+strconv.FormatBool(watchRoot)+"/"+srv.name, func(t *testing.T) {
			base := t.TempDir()
			version := 0
			root := filepath.Join(base, "runtime")
			// deploy makes data the rules: a new directory and the root's
			// symlink swapped to it, or the file rewritten in place.
			deploy := func(data string) {
				t.Helper()
				files := map[string]string{"limits.yaml": data}
				if !watchRoot {
					writeFiles(t, filepath.Join(root, "ratelimit", "config"), files)
					return
				}
				version++
				dir := "v" + strconv.Itoa(version)
				writeFiles(t, filepath.Join(base, dir, "ratelimit", "config"), files)
				tmp := filepath.Join(base, "runtime.tmp")
				if err := os.Symlink(dir, tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, root); err != nil {
					t.Fatal(err)
				}
			}
			deploy(reloadV1)
			p := startPair(t, bins, srv, map[string]string{
				"RUNTIME_ROOT": root, "RUNTIME_SUBDIRECTORY": "ratelimit",
				"RUNTIME_WATCH_ROOT": strconv.FormatBool(watchRoot),
			})
			same := func(descs ...string) {
				t.Helper()
				req := step{descs: descs}.request("reload")
				ref, ours, refErr, oursErr := p.call(t, req)
				for _, d := range differences(ref, ours, refErr, oursErr) {
					t.Errorf("%v: %s", descs, d)
				}
			}
			p.warm(t, "reload", "k=warm")
			same("k=a")
			same("k=a", "n=x") // no rule for n yet

			deploy(reloadV2)
			p.waitLimit(t, p.ref, "k=a", 5)
			p.waitLimit(t, p.ours, "k=a", 5)
			same("k=a", "n=x") // k's count kept: 3 of 5
			same("n=x")

			refused, oursRefused := p.ref.count("Error loading new configuration"), p.ours.count("configuration refused")
			deploy(reloadBad)
			waitFor(t, "the reference to refuse the file", func() bool { return p.ref.count("Error loading new configuration") > refused })
			waitFor(t, "ratelimitd to refuse the file", func() bool { return p.ours.count("configuration refused") > oursRefused })
			same("k=a") // 4 of 5: the rules in force kept

			refused = p.ref.count("Error loading new configuration")
			deploy(reloadMultiplier)
			waitFor(t, "the reference to refuse unit_multiplier", func() bool { return p.ref.count("Error loading new configuration") > refused })
			p.waitLimit(t, p.ours, "k=a", 7)
			// README: unit_multiplier is ratelimitd's; a new window is a new
			// budget, as the reference's keys hold the window.
			ref, ours, refErr, oursErr := p.call(t, step{descs: []string{"k=a"}}.request("reload"))
			if got := summary(ref, refErr); got != "OK: OK/0" {
				t.Errorf("reference after unit_multiplier: %s, want the old rule's OK: OK/0", got)
			}
			if got := summary(ours, oursErr); got != "OK: OK/6" || limitString(ours.GetStatuses()[0].GetCurrentLimit()) != " 7/DAYx365" {
				t.Errorf("ratelimitd after unit_multiplier: %s %v, want OK: OK/6 of 7/DAYx365", got, ours.GetStatuses())
			}
			if n := p.ours.count(fallbackLog); n > 0 && t.Failed() {
				t.Logf("ratelimitd's Redis took longer than its time budget %d times: the local fallback decided those", n)
			}
		})
	}
}

// waitLimit waits until svc (one of p's) answers descriptor desc with a
// limit of rpu requests, checking without taking anything.
func (p pair) waitLimit(t *testing.T, svc *proc, desc string, rpu uint32) {
	t.Helper()
	req := step{descs: []string{desc + "#0"}}.request("reload")
	waitFor(t, svc.name+" to load "+strconv.Itoa(int(rpu))+" for "+desc, func() bool {
		resp, err := svc.client.ShouldRateLimit(t.Context(), req)
		return err == nil && len(resp.GetStatuses()) == 1 &&
			resp.GetStatuses()[0].GetCurrentLimit().GetRequestsPerUnit() == rpu
	})
}

// waitFor polls cond until it holds, failing t after 20 seconds: the
// services notice a change of their files by themselves (the reference by
// file events, ratelimitd once a second).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		<-tick.C
	}
}

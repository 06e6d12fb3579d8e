package clientip

import (
	"net/http/httptest"
	"testing"
)

// TestKeysShareNoEntries: many Keys of other groupings, asked for one
// address in turn, each answer the key of their own grouping, although
// the table of recent keys is the process's and their entries meet in
// its slots.
func TestKeysShareNoEntries(t *testing.T) {
	const n = 400
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:1"
	keys := make([]*Keys, n)
	want := make([]string, n)
	for i := range keys {
		k, err := New(GroupIPv6ByPrefix(i % 129))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := k.c.clientAddr(r)
		keys[i], want[i] = k, k.c.key(a) // the key, without the table
	}
	for round := range 3 {
		for i, k := range keys {
			if got := k.Request(r); got != want[i] {
				t.Fatalf("round %d, Keys %d (/%d): %q, want %q", round, i, i%129, got, want[i])
			}
		}
	}
}

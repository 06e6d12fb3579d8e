package ratelimit_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// TestZonesCompareByName: limits of two time.LoadLocation of one zone are
// ==, and equal map keys; a zone that only shares a name is not the zone.
func TestZonesCompareByName(t *testing.T) {
	load := func(name string) *time.Location { return mustZone(t, name) }
	daily := ratelimit.Limit{Rate: 3, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow, Calendar: ratelimit.CalendarDay}
	for _, c := range []struct {
		name  string
		a, b  ratelimit.Limit
		equal bool
	}{
		{"two loads of one zone, per day", ratelimit.PerDay(3, load("Europe/Berlin")), ratelimit.PerDay(3, load("Europe/Berlin")), true},
		{"two loads of one zone, per month", ratelimit.PerMonth(3, load("America/Santiago")), ratelimit.PerMonth(3, load("America/Santiago")), true},
		{"a limit made by hand with WithZone", daily.WithZone(load("Europe/Berlin")), ratelimit.PerDay(3, load("Europe/Berlin")), true},
		{"time.UTC and nil", ratelimit.PerDay(3, time.UTC), ratelimit.PerDay(3, nil), true},
		{"two zones", ratelimit.PerDay(3, load("Europe/Berlin")), ratelimit.PerDay(3, load("Europe/Paris")), false},
		{"a fixed zone named like a real one", ratelimit.PerDay(3, time.FixedZone("Europe/Berlin", 0)), ratelimit.PerDay(3, load("Europe/Berlin")), false},
		{"two rates in one zone", ratelimit.PerDay(3, load("Europe/Berlin")), ratelimit.PerDay(4, load("Europe/Berlin")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a == c.b; got != c.equal {
				t.Fatalf("%v == %v is %v, want %v", c.a, c.b, got, c.equal)
			}
			m := map[ratelimit.Limit]int{c.a: 1}
			if _, found := m[c.b]; found != c.equal {
				t.Fatalf("as map keys: found %v, want %v", found, c.equal)
			}
		})
	}
}

// TestZoneKeepsItsOwnRules: a zone that only shares the name of another
// keeps its own midnights, whichever was seen first.
func TestZoneKeepsItsOwnRules(t *testing.T) {
	fake := time.FixedZone("Asia/Tokyo", -5*3600) // Tokyo is +9
	fakeDay := ratelimit.PerDay(1, fake)
	realDay := ratelimit.PerDay(1, mustZone(t, "Asia/Tokyo"))
	at := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		l     ratelimit.Limit
		start time.Time
	}{
		{"the fixed zone", fakeDay, time.Date(2026, 5, 4, 5, 0, 0, 0, time.UTC)},
		{"the real zone", realDay, time.Date(2026, 5, 3, 15, 0, 0, 0, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if start, _ := c.l.Window(at); !start.Equal(c.start) {
				t.Fatalf("%v: the window of %v starts at %v, want %v", c.l, at, start.UTC(), c.start)
			}
		})
	}
}

// TestZonesConcurrently: limits made at once in many goroutines from their
// own loads of a zone are all ==.
func TestZonesConcurrently(t *testing.T) {
	want := ratelimit.PerDay(5, mustZone(t, "America/Havana"))
	var wg sync.WaitGroup
	got := make([]ratelimit.Limit, 16)
	for i := range got {
		wg.Go(func() {
			zone, err := time.LoadLocation("America/Havana")
			if err == nil {
				got[i] = ratelimit.PerDay(5, zone)
			}
		})
	}
	wg.Wait()
	for i, l := range got {
		if l != want {
			t.Fatalf("limit %d: %#v, want %#v", i, l, want)
		}
	}
}

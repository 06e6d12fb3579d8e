package ratelimit

import (
	"reflect"
	"sync"
	"time"
)

// WithZone returns a copy of l whose calendar days or months are those of
// zone (nil is UTC), as [PerDay] and [PerMonth] set it. The Zone it sets
// is one *time.Location per zone name: two time.LoadLocation of one zone
// give limits that are ==, as every comparison of limits (the stores'
// caches, plans, the deny cache, map keys) needs. A zone that only shares
// the name of another (a time.FixedZone named "Europe/Berlin") is kept as
// it is, and so is time.UTC made nil.
func (l Limit) WithZone(zone *time.Location) Limit {
	l.Zone = canonicalZone(zone)
	return l
}

// maxZones bounds the zones canonicalZone keeps: by name, and the other
// pointers it has seen to each.
const maxZones = 1024

var zones struct {
	mu     sync.RWMutex
	byName map[string]*time.Location         // the canonical Location of each name
	seen   map[*time.Location]*time.Location // a Location already looked at, and its canonical one
}

// canonicalZone returns the Location that stands for zone: nil for UTC,
// else the first Location of its name that canonicalZone saw, when zone
// holds the same rules, else zone itself.
func canonicalZone(zone *time.Location) *time.Location {
	if zone == nil || zone == time.UTC {
		return nil
	}
	zones.mu.RLock()
	c, ok := zones.seen[zone]
	zones.mu.RUnlock()
	if ok {
		return c
	}
	zones.mu.Lock()
	defer zones.mu.Unlock()
	if c, ok := zones.seen[zone]; ok {
		return c
	}
	if zones.byName == nil {
		zones.byName = make(map[string]*time.Location)
		zones.seen = make(map[*time.Location]*time.Location)
	}
	name := zone.String()
	c, ok = zones.byName[name]
	switch {
	case !ok && len(zones.byName) < maxZones:
		zones.byName[name] = zone
		c = zone
	case !ok:
		return zone // too many names: comparisons fall back to the pointer
	case c != zone && !sameRules(c, zone):
		c = zone // another zone of the same name
	}
	if len(zones.seen) < maxZones {
		zones.seen[zone] = c
	}
	return c
}

// Zones are compared from 1900 to 2100 (Unix seconds).
var (
	rulesFrom = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	rulesTo   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// sameRules reports whether a and b have the same offsets from 1900 to
// 2100, and so the same calendar days: at once when they hold equal data,
// else by walking their periods (two loads of one zone differ in the
// period each cached as the current one when it was loaded, and the
// system's files list transitions that the compact ones leave to a rule).
func sameRules(a, b *time.Location) bool {
	if reflect.DeepEqual(*a, *b) {
		return true
	}
	u := rulesFrom
	for range 1 << 14 {
		offA, endA := period(u, a)
		offB, endB := period(u, b)
		if offA != offB {
			return false
		}
		if u = min(endA, endB); u >= rulesTo {
			return true
		}
	}
	return false
}

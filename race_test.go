//go:build race

package ratelimit_test

// raceEnabled: the race detector is on, and sync.Pool drops a quarter of
// what it is given, so allocation counts are not exact.
const raceEnabled = true

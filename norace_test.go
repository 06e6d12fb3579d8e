//go:build !race

package ratelimit_test

// raceEnabled: the race detector is off; allocation counts are exact.
const raceEnabled = false

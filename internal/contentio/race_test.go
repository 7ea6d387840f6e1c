//go:build race

package contentio

// raceEnabled shortens the slow randomized tests under the race detector,
// which makes them about ten times slower.
const raceEnabled = true

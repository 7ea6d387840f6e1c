//go:build race

package testutil

// RaceEnabled tells whether the race detector is on. It adds allocations
// and makes sync.Pool drop items at random, so allocation counts mean
// nothing then, and it makes randomized tests about ten times slower.
const RaceEnabled = true

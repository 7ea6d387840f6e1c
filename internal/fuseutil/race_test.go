//go:build race

package fuseutil

// raceEnabled: the race detector makes sync.Pool drop values at random.
const raceEnabled = true

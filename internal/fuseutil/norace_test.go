//go:build !race

package fuseutil

const raceEnabled = false

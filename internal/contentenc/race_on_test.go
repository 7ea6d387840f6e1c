//go:build race

package contentenc

// raceEnabled: the race detector adds allocations and makes sync.Pool drop
// items at random, so allocation counts are meaningless.
const raceEnabled = true

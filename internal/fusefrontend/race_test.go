//go:build race

package fusefrontend

// raceEnabled: the race detector makes sync.Pool drop buffers at random,
// so allocation counts are meaningless.
const raceEnabled = true

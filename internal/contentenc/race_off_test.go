//go:build !race

package contentenc

const raceEnabled = false

//go:build !race

package contentio

const raceEnabled = false

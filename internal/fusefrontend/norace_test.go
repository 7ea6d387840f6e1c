//go:build !race

package fusefrontend

const raceEnabled = false

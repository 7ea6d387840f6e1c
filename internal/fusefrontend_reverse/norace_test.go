//go:build !race

package fusefrontend_reverse

const raceEnabled = false

package contentio

import (
	"os"
	"strconv"
)

// envInt reads a positive integer tuning knob from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

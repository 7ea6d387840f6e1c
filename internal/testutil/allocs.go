package testutil

import "runtime"

// MallocsPerRun is testing.AllocsPerRun without its GOMAXPROCS(1), so
// that parallel code paths run as they do in a mount: the average number
// of heap allocations of the whole process per call of fn, after one
// warm-up call that fills the pools. Nothing else may run meanwhile (the
// calling test must not be parallel).
func MallocsPerRun(runs int, fn func()) float64 {
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

//go:build !repairtesthook

package repair

// step marks the end of one durable change. Builds with the tag
// repairtesthook (tests only, never a release) can crash the process
// there (step_testhook.go).
func (r *repairer) step() {}

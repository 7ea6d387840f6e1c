//go:build !linux

package fuseserve

// callerDying reports every interrupted caller as dying where the daemon
// cannot read a thread's pending signals: any signal ends a wait, as
// before Options.FatalInterruptsOnly.
func callerDying(uint32) bool { return true }

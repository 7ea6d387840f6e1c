//go:build !linux

package cli_test

// lockProbe: the lock probes of locks_test.go (OFD locks, Linux only)
// exist on Linux only; elsewhere the test binary is never a probe.
func lockProbe() (code int, ok bool) { return 0, false }

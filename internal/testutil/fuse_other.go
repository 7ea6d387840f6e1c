//go:build !linux

package testutil

import (
	"runtime"
	"testing"
)

// The FUSE and mount helpers of fuse.go are Linux only, like the mount
// itself (README "Platforms"). Here the tests that need them skip, so that
// the packages that use them still compile.

// skipNoFuse skips the calling test: no FUSE mount on this system.
func skipNoFuse(t testing.TB) {
	t.Helper()
	t.Skip("FUSE mounts are not supported on " + runtime.GOOS)
}

// RequireFuse skips the test: no FUSE mount on this system.
func RequireFuse(t testing.TB) { skipNoFuse(t) }

// Unmount skips the test: no FUSE mount on this system.
func Unmount(t testing.TB, mnt string, unmount func() error) { skipNoFuse(t) }

// UnmountDir skips the test: no FUSE mount on this system.
func UnmountDir(t testing.TB, dir string) { skipNoFuse(t) }

// IsMounted is false: mounts are not inspected on this system.
func IsMounted(dir string) bool { return false }

// MountLine is "": mounts are not inspected on this system.
func MountLine(dir string) string { return "" }

// MountTmpfs skips the test: tmpfs mounts are Linux only here.
func MountTmpfs(t testing.TB, dir, options string) { skipNoFuse(t) }

// ConnAbortFile skips the test: no FUSE connections on this system.
func ConnAbortFile(tb testing.TB, mnt string) string {
	skipNoFuse(tb)
	return ""
}

// ConnAbort skips the test: no FUSE connections on this system.
func ConnAbort(tb testing.TB, conn uint32) string {
	skipNoFuse(tb)
	return ""
}

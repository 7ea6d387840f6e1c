//go:build !linux

package testutil

import (
	"fmt"
	"runtime"
	"syscall"
)

// lazyUnmount: the tests that mount run on Linux only.
func lazyUnmount(dir string) error {
	return fmt.Errorf("lazy unmount: not supported on %s: %w", runtime.GOOS, syscall.EOPNOTSUPP)
}

// mountTmpfs: the tests that mount run on Linux only (MountTmpfs skips).
func mountTmpfs(dir, options string) error {
	return fmt.Errorf("tmpfs: not supported on %s: %w", runtime.GOOS, syscall.EOPNOTSUPP)
}

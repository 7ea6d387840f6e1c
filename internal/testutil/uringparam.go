package testutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// URingParam is the fuse module parameter that makes the kernel offer
// FUSE over io_uring to new mounts.
const URingParam = "/sys/module/fuse/parameters/enable_uring"

// uringParamLock serializes, across test processes (go test runs
// packages in parallel), the tests that need URingParam at one value.
const uringParamLock = "/run/gocryptfs-test-enable_uring.lock"

// SetURingParam sets URingParam to v ("Y" or "N") for the rest of the test
// and restores the old value when it ends (after the test's mounts are
// gone: cleanups run last-in first-out). It holds an exclusive lock
// meanwhile, so that two tests in different packages cannot interleave
// their changes and restore each other's value. Mounts of other tests
// made meanwhile may get either transport; both are correct. It skips
// where the kernel has no FUSE over io_uring or we are not root.
func SetURingParam(t testing.TB, v string) {
	t.Helper()
	RequireFuse(t)
	if _, err := os.Stat(URingParam); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist: this kernel has no FUSE over io_uring", URingParam)
	}
	if os.Geteuid() != 0 {
		t.Skipf("only root can change %s", URingParam)
	}
	lock, err := os.OpenFile(uringParamLock, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		t.Fatal(err)
	}
	old, err := os.ReadFile(URingParam)
	if err != nil {
		lock.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(URingParam, bytes.TrimSpace(old), 0o644); err != nil {
			t.Errorf("restoring %s to %q: %v", URingParam, old, err)
		}
		lock.Close() // releases the lock
	})
	if err := os.WriteFile(URingParam, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SetURing is SetURingParam with Y for on and N for off.
func SetURing(t testing.TB, on bool) {
	t.Helper()
	v := "N"
	if on {
		v = "Y"
	}
	SetURingParam(t, v)
}

// URingValue returns URingParam's value ("Y" or "N"), or "" when the
// kernel has no FUSE over io_uring.
func URingValue() string {
	b, err := os.ReadFile(URingParam)
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

//go:build linux

package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountinfo"
)

// RequireFuse skips the test when /dev/fuse is absent, and only then.
func RequireFuse(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("/dev/fuse not available:", err)
	}
}

// Unmount calls unmount until it succeeds, up to 50 times 100 ms apart: a
// mount stays busy for a moment after the last file on it was closed. If it
// never succeeds the test fails, and mnt is detached lazily so that the
// removal of the temp dirs does not hang on it.
func Unmount(t testing.TB, mnt string, unmount func() error) {
	t.Helper()
	var err error
	for range 50 {
		if err = unmount(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("unmount %s: %v; detaching it lazily", mnt, err)
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
		t.Logf("lazy unmount %s: %v", mnt, err)
	}
}

// UnmountDir unmounts the FUSE mount on dir with fusermount3 (as a user
// would unmount a gocryptfs process), through Unmount's retries. It does
// nothing when dir is not a mount point, so a test may unmount early and
// still register it in t.Cleanup.
func UnmountDir(t testing.TB, dir string) {
	t.Helper()
	Unmount(t, dir, func() error {
		if !IsMounted(dir) {
			return nil
		}
		if out, err := exec.Command("fusermount3", "-u", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("fusermount3 -u: %w: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}

// IsMounted reports whether dir is a mount point of this mount namespace.
func IsMounted(dir string) bool {
	return MountLine(dir) != ""
}

// MountLine returns the /proc/self/mounts line of the mount on dir, or ""
// when dir is not a mount point.
func MountLine(dir string) string {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return ""
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && mountinfo.Unescape(f[1]) == dir {
			return l
		}
	}
	return ""
}

// MountTmpfs mounts a tmpfs with the given mount options (like
// "size=256k,nr_inodes=200") on dir, for tests that need a small or full
// filesystem, and detaches it at cleanup (after the cleanups registered
// later, such as a FUSE mount on top). It skips the test where mounting
// is not permitted (not root).
func MountTmpfs(t testing.TB, dir, options string) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, options); err != nil {
		t.Skipf("cannot mount a tmpfs on %s (%v); needs root", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount tmpfs %s: %v", dir, err)
		}
	})
}

// fuseCtlDir is where the kernel's fusectl filesystem shows one directory
// per FUSE connection, whose abort file ends the connection (what
// umount -f does, and the only way out of a request that nobody answers).
const fuseCtlDir = "/sys/fs/fuse/connections"

// ConnAbortFile returns the fusectl abort file of the FUSE mount on mnt
// (see ConnAbort).
func ConnAbortFile(tb testing.TB, mnt string) string {
	tb.Helper()
	var st unix.Stat_t
	if err := unix.Stat(mnt, &st); err != nil {
		tb.Fatalf("stat %s: %v", mnt, err)
	}
	return ConnAbort(tb, unix.Minor(st.Dev))
}

// ConnAbort returns the abort file of FUSE connection conn (the minor of
// the mount's st_dev), mounting fusectl on /sys/fs/fuse/connections first
// where it is not: a machine without systemd, such as a fresh CI
// machine, has nothing there, and a test whose abort failed left its
// read waiting for good. fusectl stays mounted, as systemd's
// sys-fs-fuse-connections.mount leaves it; test.bash unmounts it at the
// end where it was not mounted before.
func ConnAbort(tb testing.TB, conn uint32) string {
	tb.Helper()
	if m, ok := mountinfo.IsMountPoint(fuseCtlDir); !ok || m.FSType != "fusectl" {
		if err := unix.Mount("fusectl", fuseCtlDir, "fusectl", 0, ""); err != nil && err != unix.EBUSY {
			tb.Fatalf("mounting fusectl on %s: %v", fuseCtlDir, err)
		}
	}
	return fmt.Sprintf("%s/%d/abort", fuseCtlDir, conn)
}

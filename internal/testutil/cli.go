package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Password is the password of every reference vector, and the one the
// tests give the filesystems they create.
const Password = "test"

// RunWithBinaries is the body of a TestMain that needs the project's
// binaries: it builds them (BuildBinaries), hands their dir to use, runs
// the tests and removes the binaries. TestMain passes the result to
// os.Exit.
func RunWithBinaries(m *testing.M, b Build, use func(dir string)) int {
	dir, cleanup, err := BuildBinaries(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	use(dir)
	return m.Run()
}

// NewDir returns a new empty directory called name in a temp dir.
func NewDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// InitFS creates a filesystem with bin -init (Password, the cheapest
// scrypt the tests accept, extra flags) in a new directory "cipher" and
// returns its path.
func InitFS(t testing.TB, bin string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cipher")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-init", "-q", "-scryptn", "10", "-extpass", "echo " + Password}, extra...)
	Expect(t, Run(t, RunOptions{}, bin, append(args, dir)...), 0)
	return dir
}

// MountFS mounts cipherdir on a new directory with bin and args (without
// -fg, so the run returns once the mount is ready), registers its
// unmount in t.Cleanup and returns the mount point. It skips the test
// without /dev/fuse.
func MountFS(t testing.TB, bin, cipherdir string, args ...string) string {
	t.Helper()
	RequireFuse(t)
	mnt := NewDir(t, "mnt")
	r := Run(t, RunOptions{}, bin, append(args, cipherdir, mnt)...)
	t.Cleanup(func() { UnmountDir(t, mnt) })
	if r.Code != 0 {
		t.Fatalf("mount failed: %v", r)
	}
	if !IsMounted(mnt) {
		t.Fatalf("exit 0 but %s is not mounted: %v", mnt, r)
	}
	return mnt
}

// WaitFor polls cond every 50 ms for up to timeout and reports whether it
// became true.
func WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

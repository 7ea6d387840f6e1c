package hostile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// mountWithin mounts dir on a new mount point with args (daemonized:
// the run returns once the mount is ready) under stepTimeout and
// registers the unmount. It returns the mount point and the FUSE
// connection number (the minor of the mount's st_dev), or "" and the
// failed run when the mount did not come up.
func mountWithin(t *testing.T, dir string, args ...string) (string, uint32, testutil.Result) {
	t.Helper()
	testutil.RequireFuse(t)
	mnt := testutil.NewDir(t, "mnt")
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	r := gocryptfs(t, append(append([]string{"-q"}, args...), dir, mnt)...)
	if r.Code != 0 {
		if testutil.IsMounted(mnt) {
			t.Errorf("exit %d but %s is mounted", r.Code, mnt)
		}
		return "", 0, r
	}
	if !testutil.IsMounted(mnt) {
		t.Fatalf("exit 0 but %s is not mounted: %v", mnt, r)
	}
	var st unix.Stat_t
	if err := unix.Stat(mnt, &st); err != nil {
		t.Fatalf("stat %s: %v", mnt, err)
	}
	return mnt, unix.Minor(st.Dev), r
}

// within runs fn on the mount mnt (FUSE connection conn) under
// stepTimeout. If fn overruns, a FUSE operation hung: the connection is
// aborted (every pending and later request fails with ENOTCONN, so fn's
// goroutine returns), the mount is detached lazily, and the test fails.
func within(t *testing.T, mnt string, conn uint32, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return
	case <-time.After(stepTimeout):
	}
	abort := testutil.ConnAbort(t, conn)
	if err := os.WriteFile(abort, []byte("1"), 0o200); err != nil {
		t.Logf("aborting FUSE connection %d: %v", conn, err)
	}
	unix.Unmount(mnt, unix.MNT_DETACH)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Log("the hung operation did not return even after the abort")
	}
	t.Fatalf("HUNG: %s on %s did not finish within %v; connection aborted", what, mnt, stepTimeout)
}

// walkResult is what a walk of a mount saw: every error by plaintext path
// and operation, and every byte read (file contents, symlink targets,
// names).
type walkResult struct {
	errs map[string]error
	seen strings.Builder
}

func (w *walkResult) note(key string, err error) {
	if err != nil {
		w.errs[key] = err
	}
}

// walkMount does what a user's tools do on a mount: list every directory,
// lstat and read every regular file, read every symlink; then create a
// file, a directory and a symlink in each directory that lists. Special
// files are not opened (a FIFO would block any reader; the mount is
// nodev). Errors are collected, not fatal: the table decides which are
// expected.
func walkMount(mnt string) *walkResult {
	w := &walkResult{errs: map[string]error{}}
	var dirs []string
	filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(mnt, p)
		w.seen.WriteString(rel + "\n")
		if err != nil {
			w.note("walk "+rel, err)
			return nil
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			w.note("read "+rel, err)
			w.seen.Write(b)
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			w.note("readlink "+rel, err)
			w.seen.WriteString(s + "\n")
		}
		return nil
	})
	// What the table's paths name, whatever the walk made of them.
	for _, rel := range []string{"f.txt", "d", "d/inner.txt", longPlain, "link"} {
		var st unix.Stat_t
		w.note("lstat "+rel, unix.Lstat(filepath.Join(mnt, rel), &st))
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			_, err := os.ReadDir(filepath.Join(mnt, rel))
			w.note("readdir "+rel, err)
		}
	}
	if !slices.Contains(dirs, filepath.Join(mnt, "d")) {
		dirs = append(dirs, filepath.Join(mnt, "d"))
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(mnt, d)
		w.note("create "+rel, os.WriteFile(filepath.Join(d, "new.txt"), []byte(insidePlain), 0o644))
		w.note("mkdir "+rel, os.Mkdir(filepath.Join(d, "newdir"), 0o755))
		w.note("symlink "+rel, os.Symlink("new.txt", filepath.Join(d, "newlink")))
	}
	return w
}

// forwardCases: what a forward mount makes of each attack. errs are the
// walk's errors that must be there (key: operation and plaintext path),
// each with the errno it must carry; every other error of the walk fails
// the test, so that an attack cannot quietly break more than its target.
// secretOK is set where the attack put valid ciphertext of the secret
// into CIPHERDIR (a hard link): the mount then rightly shows it.
var forwardCases = []struct {
	attack
	errs     map[string]syscall.Errno
	secretOK bool
}{
	// d is a symlink now: its stored target does not decrypt. The walk
	// does not follow it; creating in "d" goes through the symlink.
	{symlinkedDir, map[string]syscall.Errno{"readlink d": syscall.EIO, "create d": syscall.EIO,
		"mkdir d": syscall.EIO, "symlink d": syscall.EIO, "lstat d/inner.txt": syscall.EIO}, false},
	{symlinkedFile, map[string]syscall.Errno{"readlink f.txt": syscall.EIO}, false},
	{symlinkedDirIV, dirIVBroken, false},
	// Without a root IV no name decrypts or encrypts: every operation
	// below the root fails with EIO.
	{symlinkedRootDirIV, rootBroken, false},
	{fifoRootDirIV, rootBroken, false},
	{charDevRootDirIV, rootBroken, false},
	{symlinkedLongName, longNameBroken, false},
	{fifoFile, nil, false},
	{fifoDirIV, dirIVBroken, false},
	{fifoLongName, longNameBroken, false},
	{charDevFile, nil, false},
	{charDevDirIV, dirIVBroken, false},
	{charDevLongName, longNameBroken, false},
	{blockDevFile, nil, false},
	{hardLinkOut, nil, true},
	{hardLinkOutCorrupt, map[string]syscall.Errno{"read f.txt": syscall.EIO}, false},
	{hugeDirIV, dirIVBroken, false},
	{hugeLongName, longNameBroken, false},
	// A file shorter than a header reads as empty (as with the
	// reference); a header with a cut block fails with EIO.
	{truncatedHeader, nil, false},
	{truncatedBlock, map[string]syscall.Errno{"read f.txt": syscall.EIO}, false},
}

// dirIVBroken: a directory whose IV cannot be read lists and creates
// nothing, with EIO.
var dirIVBroken = map[string]syscall.Errno{"walk d": syscall.EIO, "readdir d": syscall.EIO,
	"lstat d/inner.txt": syscall.EIO, "create d": syscall.EIO, "mkdir d": syscall.EIO, "symlink d": syscall.EIO}

// longNameBroken: a long name whose .name file cannot be read is left out
// of listings (quietly); a lookup by its plaintext name needs only the
// hash and still finds it.
var longNameBroken map[string]syscall.Errno

// rootBroken: every operation the walk makes fails with EIO.
var rootBroken = map[string]syscall.Errno{"walk .": syscall.EIO, "create .": syscall.EIO, "mkdir .": syscall.EIO,
	"symlink .": syscall.EIO, "create d": syscall.EIO, "mkdir d": syscall.EIO, "symlink d": syscall.EIO,
	"lstat f.txt": syscall.EIO, "lstat d": syscall.EIO, "lstat d/inner.txt": syscall.EIO,
	"lstat " + longPlain: syscall.EIO, "lstat link": syscall.EIO}

// TestForwardMount mounts a CIPHERDIR with each attack planted and walks
// it (under a deadline): nothing outside changes, no walk hangs, the
// sentinel secret never comes through the mount, the attacked entry
// fails with the expected errno and nothing else fails.
func TestForwardMount(t *testing.T) {
	for _, c := range forwardCases {
		harness(t, c.attack, func(t *testing.T, f *fixture) {
			mnt, conn, r := mountWithin(t, f.cipher, pw...)
			if mnt == "" {
				t.Fatalf("mount failed: %v", r)
			}
			if l := testutil.MountLine(mnt); !strings.Contains(l, "nodev") || !strings.Contains(l, "nosuid") {
				t.Errorf("mount is not nodev,nosuid: %s", l)
			}
			var w *walkResult
			within(t, mnt, conn, "walk", func() { w = walkMount(mnt) })
			if !c.secretOK {
				noSecretIn(t, "mount", w.seen.String())
			}
			checkErrs(t, w.errs, c.errs)
			testutil.UnmountDir(t, mnt)
		})
	}
}

// checkErrs fails the test unless got holds exactly the keys of want,
// each with its errno.
func checkErrs(t *testing.T, got map[string]error, want map[string]syscall.Errno) {
	t.Helper()
	for k, errno := range want {
		if err, ok := got[k]; !ok {
			t.Errorf("%s: want %v, got success", k, errno)
		} else if !errors.Is(err, errno) {
			t.Errorf("%s: want %v, got %v", k, errno, err)
		}
	}
	for k, err := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected error %v", k, err)
		}
	}
}

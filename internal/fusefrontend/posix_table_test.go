//go:build linux

package fusefrontend

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// The POSIX table: every case runs the same system calls once in a plain
// directory on the backing filesystem (ext4 under /tmp in CI, the
// filesystem CIPHERDIR lives on) and once on a fresh mount, records what
// it observes (return values, errno names, stat fields, sorted listings,
// relations between inode numbers and timestamps) and the two records
// must be equal. Values that differ by nature (device and inode numbers,
// absolute times) are recorded only as relations.

// posixCase is one row of the table.
type posixCase struct {
	name string
	// acl mounts with -acl (POSIX ACLs enabled in the kernel).
	acl bool
	// ko are kernel mount options (as given with -ko; the mount gets
	// them through package mountopts like the binary); the plain side
	// gets them on a bind mount of its directory.
	ko  []string
	run func(e *posixEnv)
}

// posixEnv is where a case runs: the plain directory or the mount.
type posixEnv struct {
	t     *testing.T
	dir   string
	mount bool
	// remount unmounts and mounts the same CIPHERDIR again; a no-op on
	// the plain side.
	remount func()
	// forgetWaiter, called before rel is unlinked, returns a function
	// that waits until the filesystem has forgotten rel's node (the
	// kernel's FORGET served). A file handle of a deleted file then gets
	// ESTALE, as on a local filesystem; while go-fuse still knows the
	// node, the kernel reaches it by ID and the open fails by path,
	// with ENOENT (its FORGET travels through /dev/fuse even on io_uring
	// and was often still queued). A no-op on the plain side.
	forgetWaiter func(rel string) func()
	obs          []string
}

func (e *posixEnv) p(rel string) string { return filepath.Join(e.dir, rel) }

// rec records one observation.
func (e *posixEnv) rec(format string, args ...any) {
	e.obs = append(e.obs, fmt.Sprintf(format, args...))
}

// errName is the errno name of err, or "OK".
func errName(err error) string {
	if err == nil {
		return "OK"
	}
	if en, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(en)
	}
	return err.Error()
}

// res records the outcome of a call.
func (e *posixEnv) res(label string, err error) {
	e.rec("%s: %s", label, errName(err))
}

// must fails the test if a preparation step fails (on either side the
// step is expected to work).
func (e *posixEnv) must(label string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s (mount=%v): %v", label, e.mount, err)
	}
}

// statFields formats the comparable fields of a stat result.
func statFields(st *unix.Stat_t) string {
	return fmt.Sprintf("type=%o mode=%04o nlink=%d uid=%d gid=%d size=%d rdev=%d:%d",
		st.Mode&unix.S_IFMT, st.Mode&0o7777, st.Nlink, st.Uid, st.Gid, sizeOf(st),
		unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

// sizeOf is st.Size for regular files and symlinks; directory sizes are
// filesystem-specific.
func sizeOf(st *unix.Stat_t) int64 {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return -1
	}
	return st.Size
}

// lstat records the stat fields of rel (or the errno).
func (e *posixEnv) lstat(label, rel string) *unix.Stat_t {
	var st unix.Stat_t
	if err := unix.Lstat(e.p(rel), &st); err != nil {
		e.res(label, err)
		return nil
	}
	e.rec("%s: %s", label, statFields(&st))
	return &st
}

// fstat records the stat fields of an open fd (or the errno).
func (e *posixEnv) fstat(label string, fd int) *unix.Stat_t {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		e.res(label, err)
		return nil
	}
	e.rec("%s: %s", label, statFields(&st))
	return &st
}

// dirents reads all entries of an open directory with getdents.
func dirents(fd int) ([]fuse.DirEntry, error) {
	var buf [8192]byte
	var out []fuse.DirEntry
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) > 0; {
			var de fuse.DirEntry
			b = b[de.Parse(b):]
			out = append(out, de)
		}
	}
}

// listFd records the sorted names of an open directory.
func (e *posixEnv) listFd(label string, fd int) []fuse.DirEntry {
	ents, err := dirents(fd)
	if err != nil {
		e.res(label, err)
		return nil
	}
	names := make([]string, 0, len(ents))
	for _, de := range ents {
		names = append(names, de.Name)
	}
	slices.Sort(names)
	e.rec("%s: [%s]", label, strings.Join(names, " "))
	return ents
}

// list records the sorted listing of directory rel, "." and ".."
// included.
func (e *posixEnv) list(label, rel string) []fuse.DirEntry {
	fd, err := unix.Open(e.p(rel), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		e.res(label, err)
		return nil
	}
	defer unix.Close(fd)
	return e.listFd(label, fd)
}

// write creates (or opens) rel and writes data at off.
func (e *posixEnv) write(rel string, data []byte, off int64) {
	e.t.Helper()
	fd, err := unix.Open(e.p(rel), unix.O_WRONLY|unix.O_CREAT, 0o644)
	e.must("open "+rel, err)
	defer unix.Close(fd)
	_, err = unix.Pwrite(fd, data, off)
	e.must("pwrite "+rel, err)
}

// runPosixTable runs every case on both sides and compares the records.
func runPosixTable(t *testing.T, cases []posixCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain := &posixEnv{t: t, dir: plainDirWith(t, c.ko), remount: func() {}, forgetWaiter: func(string) func() { return func() {} }}
			c.run(plain)
			mnt := mountPosixEnv(t, c)
			c.run(mnt)
			if !slices.Equal(plain.obs, mnt.obs) {
				t.Errorf("plain directory and mount differ:\n%s", obsDiff(plain.obs, mnt.obs))
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("plain:\n  %s", strings.Join(plain.obs, "\n  "))
			}
		})
	}
}

// obsDiff shows the two records side by side, marking differing lines.
func obsDiff(a, b []string) string {
	var sb strings.Builder
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x == y {
			fmt.Fprintf(&sb, "    %s\n", x)
		} else {
			fmt.Fprintf(&sb, "  - %s\n  + %s\n", x, y)
		}
	}
	return sb.String()
}

// plainDirWith returns a fresh directory on the filesystem of the test's temp
// dir, on a bind mount with the kernel options ko if there are any.
func plainDirWith(t *testing.T, ko []string) string {
	dir := t.TempDir()
	if len(ko) == 0 {
		return dir
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount for %v: %v (needs root)", ko, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount bind mount: %v", err)
		}
	})
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
	for _, o := range ko {
		switch o {
		case "noatime":
			flags |= unix.MS_NOATIME
		case "strictatime":
			flags |= unix.MS_STRICTATIME
		case "relatime":
			flags |= unix.MS_RELATIME
		case "nodiratime":
			flags |= unix.MS_NODIRATIME
		default:
			t.Fatalf("plainDir: option %q not known", o)
		}
	}
	if err := unix.Mount("", dir, "", flags, ""); err != nil {
		t.Fatalf("remount %v: %v", ko, err)
	}
	return dir
}

// mountPosixEnv mounts a fresh CIPHERDIR for case c with the options the
// binary uses by default: the kernel caches entries and attributes and
// keeps written data in its page cache (writeback cache), which is where
// POSIX behaviour can go wrong unseen (a read answered from the page cache
// never reaches the frontend).
func mountPosixEnv(t *testing.T, c posixCase) *posixEnv {
	cipherDir := t.TempDir()
	e := &posixEnv{t: t, mount: true}
	cfg := testConfig{args: Args{Atime: AtimeFromOptions(c.ko), NoDiratime: NoDiratimeFromOptions(c.ko), ACL: c.acl}, kernelOptions: strings.Join(c.ko, ","), timeouts: true, writeback: true}
	tf := mountExistingOpts(t, cfg, cipherDir, true, nil)
	e.dir = tf.mnt
	e.remount = func() {
		if err := tf.srv.Unmount(); err != nil {
			t.Fatalf("unmount for remount: %v", err)
		}
		tf = mountExistingOpts(t, cfg, cipherDir, false, nil)
		e.dir = tf.mnt
	}
	e.forgetWaiter = func(rel string) func() {
		n := tf.rn.EmbeddedInode()
		for comp := range strings.SplitSeq(rel, "/") {
			if n = n.GetChild(comp); n == nil {
				t.Fatalf("forgetWaiter: %s is not in the tree (never looked up)", rel)
			}
		}
		return func() {
			// Forgotten is deprecated for NodeOnForgetter, which would
			// need a hook in the Node that ships; a test's poll may ask.
			//lint:ignore SA1019 see above
			if !testutil.WaitFor(testutil.RunTimeout, n.Forgotten) {
				t.Fatalf("the node of %s was never forgotten", rel)
			}
		}
	}
	return e
}

//go:build linux

package fusefrontend

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
)

func TestPlaintextNamesReserved(t *testing.T) {
	tf := mountFS(t, testConfig{plaintextNames: true})
	_, err := os.Create(tf.path("gocryptfs.conf"))
	errIs(t, err, syscall.EPERM, "create gocryptfs.conf")
	errIs(t, os.Mkdir(tf.path("gocryptfs.conf"), 0o755), syscall.EPERM, "mkdir gocryptfs.conf")
	// A backing config is hidden and not reachable.
	mustWrite(t, filepath.Join(tf.cipher, "gocryptfs.conf"), []byte("{}"))
	if got := listNames(t, tf.mnt); len(got) != 0 {
		t.Fatalf("listing %v", got)
	}
	_, err = os.Stat(tf.path("gocryptfs.conf"))
	errIs(t, err, syscall.ENOENT, "stat gocryptfs.conf")
	// In a subdirectory the name is fine, and so is gocryptfs.diriv.
	os.Mkdir(tf.path("d"), 0o755)
	mustWrite(t, tf.path("d/gocryptfs.conf"), []byte("x"))
	if err := os.Mkdir(tf.path("gocryptfs.diriv"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Names are stored as they are, no diriv files.
	want := []string{"d", "gocryptfs.conf", "gocryptfs.diriv"}
	if got := tf.cipherEntries(t, ""); !slices.Equal(got, want) {
		t.Fatalf("backing %v", got)
	}
	if got := tf.cipherEntries(t, "d"); !slices.Equal(got, []string{"gocryptfs.conf"}) {
		t.Fatalf("backing d %v", got)
	}
	os.Symlink("target", tf.path("s"))
	if got, _ := os.Readlink(filepath.Join(tf.cipher, "s")); got != "target" {
		t.Fatalf("backing symlink %q", got)
	}
}

func TestDeterministicNames(t *testing.T) {
	tf := mountFS(t, testConfig{deterministic: true})
	os.Mkdir(tf.path("a"), 0o755)
	os.Mkdir(tf.path("b"), 0o755)
	mustWrite(t, tf.path("a/same"), nil)
	mustWrite(t, tf.path("b/same"), nil)
	ca, _ := tf.rn.EncryptPath("a/same")
	cb, _ := tf.rn.EncryptPath("b/same")
	if filepath.Base(ca) != filepath.Base(cb) {
		t.Fatalf("%s vs %s", ca, cb)
	}
	for _, n := range append(tf.cipherEntries(t, ""), tf.cipherEntries(t, filepath.Dir(ca))...) {
		if n == nametransform.DirIVFilename {
			t.Fatal("diriv file in deterministic mode")
		}
	}
	if err := os.Remove(tf.path("a/same")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tf.path("a")); err != nil {
		t.Fatal(err)
	}
}

func TestHiddenAndBadNames(t *testing.T) {
	tf := mountFS(t, testConfig{})
	mustWrite(t, tf.path("visible"), []byte("v"))
	mustWrite(t, tf.path(longName), []byte("l"))
	mustWrite(t, filepath.Join(tf.cipher, "gocryptfs.conf"), []byte("{}"))
	mustWrite(t, filepath.Join(tf.cipher, "not-base64!"), nil)
	mustWrite(t, filepath.Join(tf.cipher, "QUJD"), nil) // valid base64, wrong length
	for range 3 {
		got := listNames(t, tf.mnt)
		if !slices.Equal(got, []string{longName, "visible"}) {
			t.Fatalf("listing %v", got)
		}
	}
	if n := tf.logs.CountLines("not-base64!"); n != 1 {
		t.Fatalf("%d warnings for not-base64!, want 1:\n%s", n, tf.logs)
	}
	if n := tf.logs.CountLines("QUJD"); n != 1 {
		t.Fatalf("%d warnings for QUJD, want 1", n)
	}
	// A long name whose .name file is missing is hidden too.
	var long string
	for _, n := range tf.cipherEntries(t, "") {
		if nametransform.IsLongNameFile(n) {
			long = n
		}
	}
	os.Remove(filepath.Join(tf.cipher, long))
	if got := listNames(t, tf.mnt); !slices.Equal(got, []string{"visible"}) {
		t.Fatalf("listing without .name %v", got)
	}
}

func TestBadname(t *testing.T) {
	tf := mountFS(t, testConfig{badname: []string{"*"}})
	mustWrite(t, tf.path("a"), []byte("A"))
	ca, _ := tf.rn.EncryptPath("a")
	// Give the bad names real encrypted contents by hard-linking backing
	// files written through the mount.
	mustWrite(t, tf.path("c1"), []byte("conflict"))
	mustWrite(t, tf.path("c2"), []byte("foo"))
	c1, _ := tf.rn.EncryptPath("c1")
	c2, _ := tf.rn.EncryptPath("c2")
	os.Rename(filepath.Join(tf.cipher, c1), filepath.Join(tf.cipher, ca+" (conflicted copy)"))
	os.Rename(filepath.Join(tf.cipher, c2), filepath.Join(tf.cipher, "foo"))
	got := listNames(t, tf.mnt)
	want := []string{"a", "a (conflicted copy) GOCRYPTFS_BAD_NAME", "foo GOCRYPTFS_BAD_NAME"}
	if !slices.Equal(got, want) {
		t.Fatalf("listing %q", got)
	}
	if b := mustRead(t, tf.path("a (conflicted copy) GOCRYPTFS_BAD_NAME")); string(b) != "conflict" {
		t.Fatalf("read bad name: %q", b)
	}
	if b := mustRead(t, tf.path("foo GOCRYPTFS_BAD_NAME")); string(b) != "foo" {
		t.Fatalf("read bad name: %q", b)
	}
}

func TestNoXattr(t *testing.T) {
	tf := mountFS(t, testConfig{args: Args{NoXattr: true}})
	p := tf.path("f")
	mustWrite(t, p, nil)
	errIs(t, unix.Setxattr(p, "user.a", []byte("x"), 0), syscall.EOPNOTSUPP, "set")
	_, err := unix.Getxattr(p, "user.a", make([]byte, 10))
	errIs(t, err, syscall.ENODATA, "get")
	errIs(t, unix.Removexattr(p, "user.a"), syscall.EOPNOTSUPP, "remove")
	n, err := unix.Listxattr(p, make([]byte, 100))
	if err != nil || n != 0 {
		t.Fatalf("list %d %v", n, err)
	}
}

func TestSuidCapability(t *testing.T) {
	tf := mountFS(t, testConfig{args: Args{Suid: true}})
	p := tf.path("f")
	mustWrite(t, p, nil)
	_, err := unix.Getxattr(p, "security.capability", make([]byte, 10))
	errIs(t, err, syscall.ENODATA, "get security.capability with Suid")
}

func TestForceOwnerAndReadOnly(t *testing.T) {
	cipher := t.TempDir()
	tf := mountExisting(t, testConfig{args: Args{ForceOwner: &fuse.Owner{Uid: 4321, Gid: 8765}}}, cipher, true)
	mustWrite(t, tf.path("f"), []byte("x"))
	os.Mkdir(tf.path("d"), 0o755)
	for _, p := range []string{"f", "d", ""} {
		st := statOf(t, tf.path(p))
		if st.Uid != 4321 || st.Gid != 8765 {
			t.Fatalf("%q: owner %d:%d", p, st.Uid, st.Gid)
		}
	}
	ro := mountExisting(t, testConfig{args: Args{ReadOnly: true}}, cipher, false)
	if b := mustRead(t, ro.path("f")); string(b) != "x" {
		t.Fatalf("read %q", b)
	}
	_, err := os.OpenFile(ro.path("f"), os.O_WRONLY, 0)
	errIs(t, err, syscall.EROFS, "open for write")
	errIs(t, os.Mkdir(ro.path("x"), 0o755), syscall.EROFS, "mkdir")
	errIs(t, os.Remove(ro.path("f")), syscall.EROFS, "unlink")
	errIs(t, os.Chmod(ro.path("f"), 0o600), syscall.EROFS, "chmod")
}

func TestEncryptDecryptPath(t *testing.T) {
	tf := mountFS(t, testConfig{})
	os.MkdirAll(tf.path("a/"+longName+"/c"), 0o755)
	for _, p := range []string{"", "a", "a/" + longName, "a/" + longName + "/c", "a/" + longName + "/c/notyet"} {
		c, err := tf.rn.EncryptPath(p)
		if err != nil {
			t.Fatalf("EncryptPath(%q): %v", p, err)
		}
		if p != "" {
			if _, err := os.Lstat(filepath.Join(tf.cipher, filepath.Dir(c))); err != nil {
				t.Fatalf("%q -> %q: parent missing: %v", p, c, err)
			}
		}
		back, err := tf.rn.DecryptPath(c)
		if err != nil || back != p {
			t.Fatalf("DecryptPath(%q) = %q, %v; want %q", c, back, err, p)
		}
	}
	if _, err := tf.rn.EncryptPath("missing/x"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("missing dir: %v", err)
	}
}

// TestCounters: OpenFileCount (what -idle asks) counts open handles.
// (The request count of the idle monitor is fuseserve's.)
func TestCounters(t *testing.T) {
	tf := mountFS(t, testConfig{})
	f, err := os.Create(tf.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	if n := tf.rn.OpenFileCount(); n != 1 {
		t.Fatalf("open files %d", n)
	}
	f.Close()
	// Release is asynchronous to close(2); wait for it.
	for range 100 {
		if tf.rn.OpenFileCount() == 0 {
			return
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 10e6}, nil)
	}
	t.Fatalf("open files %d after close", tf.rn.OpenFileCount())
}

// TestAllowOtherOwnership creates entries as an unprivileged user through a
// root-run mount with AllowOther: they must belong to that user, and the
// new directory's gocryptfs.diriv too.
func TestAllowOtherOwnership(t *testing.T) {
	tf := mountAllowOther(t, false)
	out, err := runAs(tf.mnt, callerUid, callerGid, nil, "touch f && mkdir d && ln -s f s && mkfifo p")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, n := range []string{"f", "d", "s", "p"} {
		st := statOf(t, tf.path(n))
		if st.Uid != callerUid || st.Gid != callerGid {
			t.Errorf("%s: owner %d:%d", n, st.Uid, st.Gid)
		}
	}
	cd, _ := tf.rn.EncryptPath("d")
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(tf.cipher, cd, nametransform.DirIVFilename), &st); err != nil || st.Uid != callerUid {
		t.Errorf("diriv owner %d (%v)", st.Uid, err)
	}
}

package fusefrontend_reverse

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

func TestNewRootNodeErrors(t *testing.T) {
	_, nt, ce := newCrypto(t, tv14Config())
	dir := t.TempDir()
	gcmCE := coretest.New(t, coretest.Options{Cipher: cryptocore.AESGCM, HKDF: true}).CE
	cases := []struct {
		name    string
		args    Args
		ce      *contentenc.ContentEnc
		is      error
		exclude bool // wraps ErrExclude (exit code 29)
	}{
		{"unreadable -exclude-from", Args{PlainDir: dir, ExcludeFrom: []string{filepath.Join(dir, "missing")}}, ce, ErrExcludeFrom, true},
		{"invalid -exclude", Args{PlainDir: dir, Excludes: []string{"/"}}, ce, nil, true},
		{"AES-GCM", Args{PlainDir: dir}, gcmCE, ErrNotAESSIV, false},
		{"missing dir", Args{PlainDir: filepath.Join(dir, "missing")}, ce, syscall.ENOENT, false},
		{"names mismatch", Args{PlainDir: dir, PlaintextNames: true}, ce, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rn, err := NewRootNode(c.args, nt, c.ce)
			if err == nil {
				rn.Close()
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if errors.Is(err, ErrExclude) != c.exclude {
				t.Errorf("wraps ErrExclude: %v, want %v (%v)", !c.exclude, c.exclude, err)
			}
		})
	}
}

// TestPlaintextNamesConfig: with PlaintextNames the reverse config is shown
// as gocryptfs.conf and a real gocryptfs.conf under an inaccessible
// collision name; a custom config disables both.
func TestPlaintextNamesConfig(t *testing.T) {
	cfg := fsConfig{masterKey: testutil.MasterKey(), hkdf: true, plaintextNames: true}
	plain := t.TempDir()
	mustWriteFile(t, filepath.Join(plain, ReverseConfName), []byte("the config"))
	mustWriteFile(t, filepath.Join(plain, "gocryptfs.conf"), []byte("a plaintext file"))
	mustMkdir(t, filepath.Join(plain, "d"))
	mustWriteFile(t, filepath.Join(plain, "d", "gocryptfs.conf"), []byte("fine here"))

	m, _ := mountReverse(t, cfg, Args{PlainDir: plain})
	names := readDirNames(t, m.mnt)
	var collision string
	for _, n := range names {
		if strings.HasPrefix(n, "gocryptfs.conf_NAME_COLLISION_") {
			collision = n
		}
	}
	if len(names) != 3 || !slices.Contains(names, "gocryptfs.conf") || !slices.Contains(names, "d") || collision == "" {
		t.Fatalf("root listing %q", names)
	}
	if b, err := os.ReadFile(m.path("gocryptfs.conf")); err != nil || string(b) != "the config" {
		t.Errorf("gocryptfs.conf = %q, %v", b, err)
	}
	if err := unix.Lstat(m.path(collision), new(unix.Stat_t)); err != syscall.ENOENT {
		t.Errorf("collision name accessible: %v", err)
	}
	if err := unix.Lstat(m.path(ReverseConfName), new(unix.Stat_t)); err != syscall.ENOENT {
		t.Errorf("%s accessible under its own name: %v", ReverseConfName, err)
	}
	if b, err := os.ReadFile(m.path("d/gocryptfs.conf")); err != nil || len(b) != contentenc.HeaderLen+len("fine here")+32 {
		t.Errorf("d/gocryptfs.conf: %d bytes, %v", len(b), err)
	}

	custom, _ := mountReverse(t, cfg, Args{PlainDir: plain, CustomConfig: true})
	names = readDirNames(t, custom.mnt)
	if !slices.Equal(names, []string{ReverseConfName, "d", "gocryptfs.conf"}) {
		t.Errorf("custom config listing %q", names)
	}
	if b, err := os.ReadFile(custom.path("gocryptfs.conf")); err != nil || len(b) != contentenc.HeaderLen+len("a plaintext file")+32 {
		t.Errorf("custom config: gocryptfs.conf %d bytes, %v", len(b), err)
	}
}

// TestCustomConfigEncryptedNames: with -config elsewhere, no gocryptfs.conf
// is shown and .gocryptfs.reverse.conf is an ordinary (encrypted) file.
func TestCustomConfigEncryptedNames(t *testing.T) {
	plain := t.TempDir()
	mustWriteFile(t, filepath.Join(plain, ReverseConfName), []byte("cfg"))
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain, CustomConfig: true})
	enc, err := rn.EncryptPath(ReverseConfName)
	if err != nil {
		t.Fatal(err)
	}
	names := readDirNames(t, m.mnt)
	want := []string{enc, "gocryptfs.diriv"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("listing %q, want %q", names, want)
	}
	if err := unix.Lstat(m.path("gocryptfs.conf"), new(unix.Stat_t)); err != syscall.ENOENT {
		t.Errorf("gocryptfs.conf with custom config: %v", err)
	}
}

func TestNoXattrAndForceOwner(t *testing.T) {
	plain := makeTV14(t)
	owner := &fuse.Owner{Uid: 1234, Gid: 5678}
	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain, NoXattr: true, ForceOwner: owner})
	const hello = "F8rwmoCL-WWYHyKmxirgkg"
	if names := listXattr(t, m.path(hello)); len(names) != 0 {
		t.Errorf("xattrs listed with NoXattr: %q", names)
	}
	if _, err := unix.Lgetxattr(m.path(hello), "user.gocryptfs.49MtW6o4r3wu_Jt77wclOA", nil); err != syscall.ENODATA {
		t.Errorf("getxattr with NoXattr: %v", err)
	}
	for _, p := range []string{"", hello, "gocryptfs.diriv", "gocryptfs.conf", "XQJH2Es0-94o4Jo8iSvfzQ"} {
		var st unix.Stat_t
		if err := unix.Lstat(m.path(p), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != owner.Uid || st.Gid != owner.Gid {
			t.Errorf("%q owned by %d:%d", p, st.Uid, st.Gid)
		}
	}
}

// TestSymlinkTooLong: a target whose encoding exceeds 4096 characters
// cannot be read (ENAMETOOLONG); the mount keeps working.
func TestSymlinkTooLong(t *testing.T) {
	plain := t.TempDir()
	if err := os.Symlink(strings.Repeat("x", 3100), filepath.Join(plain, "long")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.Repeat("x", 3000), filepath.Join(plain, "ok")); err != nil {
		t.Fatal(err)
	}
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	for name, want := range map[string]error{"long": syscall.ENAMETOOLONG, "ok": nil} {
		enc, err := rn.EncryptPath(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = os.Readlink(m.path(enc))
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Errorf("readlink %s: %v, want %v", name, err, want)
		}
	}
}

// TestOneFileSystem mounts a tmpfs below the plaintext directory: with
// -one-file-system it is shown empty (apart from gocryptfs.diriv), without
// it its entries appear with inode numbers from another namespace.
func TestOneFileSystem(t *testing.T) {
	testutil.RequireFuse(t)
	plain := t.TempDir()
	sub := filepath.Join(plain, "mnt")
	mustMkdir(t, sub)
	testutil.MountTmpfs(t, sub, "size=1m")
	mustWriteFile(t, filepath.Join(sub, "inside"), []byte("on another device"))

	for _, one := range []bool{true, false} {
		m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain, OneFileSystem: one})
		encDir, err := rn.EncryptPath("mnt")
		if err != nil {
			t.Fatal(err)
		}
		encFile, err := rn.EncryptPath("mnt/inside")
		if err != nil {
			t.Fatal(err)
		}
		names := readDirNames(t, m.path(encDir))
		var st unix.Stat_t
		err = unix.Lstat(m.path(encFile), &st)
		if one {
			if !slices.Equal(names, []string{"gocryptfs.diriv"}) {
				t.Errorf("-one-file-system: mount point lists %q", names)
			}
			if err != syscall.ENOENT {
				t.Errorf("-one-file-system: file below mount point: %v", err)
			}
			if b, err := os.ReadFile(m.path(encDir + "/gocryptfs.diriv")); err != nil || len(b) != nametransform.DirIVLen {
				t.Errorf("diriv of mount point: %x %v", b, err)
			}
			continue
		}
		if len(names) != 2 || err != nil {
			t.Errorf("without -one-file-system: %q, %v", names, err)
		} else if st.Ino < 1<<48 {
			t.Errorf("inode %d of a file on another device is not in a namespace", st.Ino)
		}
	}
}

// TestMountPointLeftOut mounts the view inside the plaintext directory it
// shows (PLAINDIR/sub/mnt): with Args.MountPoint the mount point is
// neither listed nor found (also under its hashed long name, and with
// -one-file-system), so a walk of the view ends. Without it, the view
// lists its own mount point and contains itself without end.
func TestMountPointLeftOut(t *testing.T) {
	for _, c := range []struct {
		name    string
		mntName string
		one     bool
	}{
		{"short", "mnt", false},
		{"one-file-system", "mnt", true},
		{"long name", strings.Repeat("m", 200), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := t.TempDir()
			mnt := filepath.Join(plain, "sub", c.mntName)
			mustMkdir(t, filepath.Join(plain, "sub"))
			mustMkdir(t, mnt)
			mustWriteFile(t, filepath.Join(plain, "sub", "keep"), []byte("kept"))
			mp, err := MountPointOf(mnt)
			if err != nil {
				t.Fatal(err)
			}
			m, rn := mountReverseAt(t, mnt, tv14Config(), Args{PlainDir: plain, OneFileSystem: c.one, MountPoint: mp})
			encSub, err := rn.EncryptPath("sub")
			if err != nil {
				t.Fatal(err)
			}
			encMnt, err := rn.EncryptPath("sub/" + c.mntName)
			if err != nil {
				t.Fatal(err)
			}
			encKeep, err := rn.EncryptPath("sub/keep")
			if err != nil {
				t.Fatal(err)
			}
			names := readDirNames(t, m.path(encSub))
			want := []string{path.Base(encKeep), "gocryptfs.diriv"}
			slices.Sort(want)
			if slices.Sort(names); !slices.Equal(names, want) {
				t.Errorf("sub lists %q, want %q", names, want)
			}
			lookups := []string{encMnt}
			if c.mntName != "mnt" {
				lookups = append(lookups, encMnt+".name")
			}
			for _, p := range lookups {
				if _, err := os.Lstat(m.path(p)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("lookup of the mount point %s: %v, want ENOENT", path.Base(p), err)
				}
			}
			// The whole view can be walked (it would recurse through the
			// mount point, up to ELOOP or forever, if it were shown).
			n := 0
			err = filepath.WalkDir(m.mnt, func(string, fs.DirEntry, error) error { n++; return nil })
			if err != nil || n > 10 {
				t.Errorf("walk of the view: %d entries, %v", n, err)
			}
		})
	}
}

// TestACLPassThrough: POSIX ACL attributes keep their names and raw values
// in the view.
func TestACLPassThrough(t *testing.T) {
	plain := t.TempDir()
	p := filepath.Join(plain, "f")
	mustWriteFile(t, p, []byte("x"))
	// ACL xattr format: le32 version 2, then (le16 tag, le16 perm, le32 id)
	// entries: USER_OBJ rw, USER 1000 r, GROUP_OBJ r, MASK r, OTHER r.
	acl := []byte{2, 0, 0, 0,
		1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		2, 0, 4, 0, 0xe8, 3, 0, 0,
		4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff}
	if err := unix.Setxattr(p, nametransform.ACLAccess, acl, 0); err != nil {
		t.Skip("cannot set an ACL on the plaintext side:", err)
	}
	want, err := unix.Getxattr(p, nametransform.ACLAccess, make([]byte, 256))
	if err != nil {
		t.Fatal(err)
	}
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	enc, err := rn.EncryptPath("f")
	if err != nil {
		t.Fatal(err)
	}
	names := listXattr(t, m.path(enc))
	if !slices.Contains(names, nametransform.ACLAccess) {
		t.Fatalf("ACL not listed: %q", names)
	}
	buf := make([]byte, 256)
	n, err := unix.Lgetxattr(m.path(enc), nametransform.ACLAccess, buf)
	if err == syscall.EOPNOTSUPP {
		t.Skip("kernel does not forward ACL reads to this FUSE mount")
	}
	if err != nil || n != want {
		t.Errorf("ACL value: %d bytes, %v; want %d", n, err, want)
	}
}

// TestConfigCannotBeExcluded: exclusion patterns never hide the config.
func TestConfigCannotBeExcluded(t *testing.T) {
	plain := makeTV14(t)
	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain, Excludes: []string{ReverseConfName}, ExcludeWildcards: []string{".*"}})
	if b, err := os.ReadFile(m.path("gocryptfs.conf")); err != nil || string(b) != tv14Conf {
		t.Errorf("gocryptfs.conf: %q, %v", b, err)
	}
	if names := readDirNames(t, m.mnt); !slices.Contains(names, "gocryptfs.conf") {
		t.Errorf("gocryptfs.conf not listed: %q", names)
	}
}

// TestRenameWhileMounted: after a directory is renamed in PLAINDIR, the
// view shows exactly what a fresh mount shows (the directory keeps its
// inode, but its IV and everything below it change with the path).
func TestRenameWhileMounted(t *testing.T) {
	plain := t.TempDir()
	mustMkdir(t, filepath.Join(plain, "a"))
	mustWriteFile(t, filepath.Join(plain, "a", "f"), []byte("content of f"))
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	read := func(m *mounted, rn *RootNode, plainPath string) []byte {
		t.Helper()
		dir, virtual := strings.CutSuffix(plainPath, "/gocryptfs.diriv")
		enc, err := rn.EncryptPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		if virtual {
			enc += "/gocryptfs.diriv"
		}
		b, err := os.ReadFile(m.path(enc))
		if err != nil {
			t.Fatalf("%s (%s): %v", plainPath, enc, err)
		}
		return b
	}
	before := read(m, rn, "a/gocryptfs.diriv")
	read(m, rn, "a/f")
	if err := os.Rename(filepath.Join(plain, "a"), filepath.Join(plain, "b")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // entry and attr timeouts
	fresh, rn2 := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	for _, p := range []string{"b/gocryptfs.diriv", "b/f"} {
		if got, want := read(m, rn, p), read(fresh, rn2, p); !bytes.Equal(got, want) {
			t.Errorf("%s after rename: %x, fresh mount: %x", p, got, want)
		}
	}
	if bytes.Equal(before, read(m, rn, "b/gocryptfs.diriv")) {
		t.Error("directory IV did not change with the path")
	}
}

// TestConcurrentAccess reads, lists and stats the view from several
// goroutines at once (run with -race).
func TestConcurrentAccess(t *testing.T) {
	plain := makeTV14(t)
	big := make([]byte, 2<<20+77)
	for i := range big {
		big[i] = byte(i * 7)
	}
	mustWriteFile(t, filepath.Join(plain, "big"), big)
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	enc, err := rn.EncryptPath("big")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(m.path(enc))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			f, err := os.Open(m.path(enc))
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			for i := range 30 {
				off := (g*7919 + i*104729) % len(whole)
				buf := make([]byte, 1+(i*4099)%300000)
				n, _ := f.ReadAt(buf, int64(off))
				if !bytes.Equal(buf[:n], whole[off:min(off+len(buf), len(whole))]) {
					errs <- fmt.Errorf("goroutine %d: ReadAt(%d, %d) mismatch", g, off, len(buf))
					return
				}
				if _, err := os.ReadDir(m.mnt); err != nil {
					errs <- err
					return
				}
				if _, err := os.Lstat(m.path("7s5GSiP46Ev-749M2p4GuA/gocryptfs.diriv")); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestConfigHardLink: a hard link to .gocryptfs.reverse.conf elsewhere is
// an ordinary encrypted file; it is never confused with gocryptfs.conf.
func TestConfigHardLink(t *testing.T) {
	plain := makeTV14(t)
	if err := os.Link(filepath.Join(plain, ReverseConfName), filepath.Join(plain, "dir1", "cfglink")); err != nil {
		t.Fatal(err)
	}
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	enc, err := rn.EncryptPath("dir1/cfglink")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // both orders of first access
		for _, p := range []string{enc, "gocryptfs.conf"} {
			b, err := os.ReadFile(m.path(p))
			if err != nil {
				t.Fatal(err)
			}
			raw := string(b) == tv14Conf
			if raw != (p == "gocryptfs.conf") || (!raw && len(b) != contentenc.HeaderLen+len(tv14Conf)+32) {
				t.Errorf("%s: %d bytes, raw config: %v", p, len(b), raw)
			}
		}
		time.Sleep(1100 * time.Millisecond)
	}
}

//go:build linux

package syscallcompat

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func TestRetry(t *testing.T) {
	calls := 0
	err := Retry(func() error {
		calls++
		if calls < 3 {
			return syscall.EINTR
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
	calls = 0
	err = Retry(func() error { calls++; return syscall.EINTR })
	if err != syscall.EINTR || calls != maxEINTR {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

// TestNoFollow checks that none of the helpers follows a symlink placed in
// the last component or in the middle of a walked path.
func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	dfd := openDir(t, dir)

	cases := []struct {
		name string
		fn   func() error
		want error
	}{
		{"Openat", func() error { _, err := Openat(dfd, "link", unix.O_RDONLY, 0); return err }, syscall.ELOOP},
		{"OpenDirAt", func() error { _, err := OpenDirAt(dfd, "dirlink"); return err }, syscall.ENOTDIR},
		{"WalkDirs", func() error { _, err := WalkDirs(dfd, "dirlink/x"); return err }, syscall.ENOTDIR},
		{"WalkDirsDotDot", func() error { _, err := WalkDirs(dfd, "../x"); return err }, syscall.EINVAL},
		{"Fchmodat", func() error { return Fchmodat(dfd, "link", 0o777) }, syscall.EOPNOTSUPP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fn(); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// Operations that succeed must have changed the link, not the victim.
	if err := Fchownat(dfd, "link", os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	ts := [2]unix.Timespec{{Sec: 42}, {Sec: 43}}
	if err := UtimesNanoAt(dfd, "link", ts); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(victim, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mtim.Sec == 43 || st.Mode&0o777 != 0o600 {
		t.Fatalf("victim changed: %+v", st)
	}
	if err := Fstatat(dfd, "link", &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFLNK || st.Mtim.Sec != 43 {
		t.Fatalf("Fstatat link: %v %+v", err, st)
	}
	if err := Linkat(dfd, "link", dfd, "link2"); err != nil {
		t.Fatal(err)
	}
	if err := Fstatat(dfd, "link2", &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Fatalf("Linkat followed the symlink: %v", err)
	}
}

func TestFileOps(t *testing.T) {
	dir := t.TempDir()
	dfd := openDir(t, dir)
	if err := Mkdirat(dfd, "d", 0o700); err != nil {
		t.Fatal(err)
	}
	sub, err := WalkDirs(dfd, "d")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(sub)
	fd, err := Openat(sub, "f", unix.O_CREAT|unix.O_EXCL|unix.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fd)
	if err := Fchmodat(sub, "f", 0o600); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := Fstat(fd, &st); err != nil || st.Mode&0o777 != 0o600 {
		t.Fatalf("mode %o err %v", st.Mode, err)
	}
	if err := Fchmod(fd, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := FutimesNano(fd, [2]unix.Timespec{{Sec: 1}, {Sec: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := Fstatat(sub, "f", &st); err != nil || st.Mode&0o777 != 0o640 || st.Mtim.Sec != 2 {
		t.Fatalf("st %+v err %v", st, err)
	}
	// UTIME_OMIT keeps mtime, UTIME_NOW moves atime.
	if err := UtimesNanoAt(sub, "f", [2]unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}); err != nil {
		t.Fatal(err)
	}
	if err := Fstatat(sub, "f", &st); err != nil || st.Mtim.Sec != 2 || st.Atim.Sec < 1000 {
		t.Fatalf("st %+v err %v", st, err)
	}

	if err := Symlinkat("target/x", sub, "s"); err != nil {
		t.Fatal(err)
	}
	if got, err := Readlinkat(sub, "s"); err != nil || got != "target/x" {
		t.Fatalf("readlink %q %v", got, err)
	}
	long := string(make([]byte, 0, 1000))
	for len(long) < 1000 {
		long += "abcdefghij"
	}
	if err := Symlinkat(long, sub, "long"); err != nil {
		t.Fatal(err)
	}
	if got, err := Readlinkat(sub, "long"); err != nil || got != long {
		t.Fatalf("readlink long: len %d %v", len(got), err)
	}
	if err := Mknodat(sub, "fifo", syscall.S_IFIFO|0o600, 0); err != nil {
		t.Fatal(err)
	}

	// rename variants
	if err := Renameat2(sub, "f", sub, "s", unix.RENAME_NOREPLACE); err != syscall.EEXIST {
		t.Fatalf("NOREPLACE: %v", err)
	}
	if err := Renameat2(sub, "f", sub, "s", unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	if err := Fstatat(sub, "f", &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Fatalf("exchange: %v", err)
	}
	if err := Renameat2(sub, "f", dfd, "moved", 0); err != nil {
		t.Fatal(err)
	}

	ents, err := Getdents(sub)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Ino == 0 {
			t.Errorf("%s: no ino", e.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"fifo", "long", "s"}) {
		t.Fatalf("names %v", names)
	}
	for _, e := range ents {
		want := map[string]uint32{"fifo": syscall.S_IFIFO, "long": syscall.S_IFLNK, "s": syscall.S_IFREG}[e.Name]
		if e.Type != want {
			t.Errorf("%s: type %o want %o", e.Name, e.Type, want)
		}
	}
	if err := Unlinkat(dfd, "d", unix.AT_REMOVEDIR); err != syscall.ENOTEMPTY {
		t.Fatalf("rmdir non-empty: %v", err)
	}
	var sfs unix.Statfs_t
	if err := Fstatfs(dfd, &sfs); err != nil || sfs.Blocks == 0 {
		t.Fatalf("statfs %v", err)
	}
}

func TestXattr(t *testing.T) {
	dir := t.TempDir()
	dfd := openDir(t, dir)
	fd, err := Openat(dfd, "f", unix.O_CREAT|unix.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	Close(fd)
	pfd, err := OpenPathAt(dfd, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(pfd)
	big := make([]byte, 3000)
	for i := range big {
		big[i] = byte(i)
	}
	if err := Fsetxattr(pfd, "user.a", big, 0); err != nil {
		if err == syscall.EOPNOTSUPP {
			t.Skip("no user xattrs on", dir)
		}
		t.Fatal(err)
	}
	if err := Fsetxattr(pfd, "user.b", nil, 0); err != nil {
		t.Fatal(err)
	}
	got, err := FgetxattrAll(pfd, "user.a")
	if err != nil || !slices.Equal(got, big) {
		t.Fatalf("get: %v len %d", err, len(got))
	}
	got, err = FgetxattrAll(pfd, "user.b")
	if err != nil || len(got) != 0 {
		t.Fatalf("get empty: %v %q", err, got)
	}
	names, err := FlistxattrAll(pfd)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"user.a", "user.b"}) {
		t.Fatalf("list %v %v", names, err)
	}
	if err := Fremovexattr(pfd, "user.a"); err != nil {
		t.Fatal(err)
	}
	if _, err := FgetxattrAll(pfd, "user.a"); err != syscall.ENODATA {
		t.Fatalf("after remove: %v", err)
	}
	// On a symlink, the O_PATH handle addresses the link itself: user.*
	// xattrs are not permitted there (EPERM), and nothing reaches the target.
	if err := Symlinkat("f", dfd, "s"); err != nil {
		t.Fatal(err)
	}
	sfd, err := OpenPathAt(dfd, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(sfd)
	if err := Fsetxattr(sfd, "user.c", []byte("x"), 0); err != syscall.EPERM {
		t.Fatalf("symlink setxattr: %v", err)
	}
	if _, err := FgetxattrAll(pfd, "user.c"); err != syscall.ENODATA {
		t.Fatalf("target got attribute: %v", err)
	}
}

func TestParseDirentsMalformed(t *testing.T) {
	if _, err := parseDirents(make([]byte, 10), nil); !errors.Is(err, ErrBadDirent) {
		t.Fatal(err)
	}
	b := make([]byte, 24)
	b[16] = 200 // reclen beyond buffer
	if _, err := parseDirents(b, nil); !errors.Is(err, ErrBadDirent) {
		t.Fatal(err)
	}
}

// TestOpenFileAt: only regular files are opened, with the requested
// access mode and without a leftover O_NONBLOCK; a FIFO neither blocks nor
// gets opened, also on the fallback path without /proc.
func TestOpenFileAt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	haveDev := unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))) == nil
	dfd := openDir(t, dir)
	noProc := func(int) string { return "/nonexistent-proc/fd/0" }
	for _, via := range []struct {
		name string
		proc func(int) string
	}{{"proc", ProcFdPath}, {"fallback", noProc}} {
		t.Run(via.name, func(t *testing.T) {
			cases := []struct {
				name  string
				flags int
				want  error
			}{
				{"file", unix.O_RDONLY, nil},
				{"file", unix.O_RDWR, nil},
				{"file", unix.O_RDWR | unix.O_CREAT, syscall.EINVAL},
				{"fifo", unix.O_RDONLY, syscall.EINVAL},
				{"fifo", unix.O_WRONLY, syscall.EINVAL},
				{"dir", unix.O_RDONLY, syscall.EISDIR},
				{"link", unix.O_RDONLY, syscall.ELOOP},
				{"missing", unix.O_RDONLY, syscall.ENOENT},
			}
			if haveDev {
				cases = append(cases, struct {
					name  string
					flags int
					want  error
				}{"null", unix.O_RDWR, syscall.EINVAL})
			}
			for _, c := range cases {
				done := make(chan struct{})
				var fd int
				var err error
				var st unix.Stat_t
				go func() {
					fd, err = openFileAt(dfd, c.name, c.flags, &st, via.proc)
					close(done)
				}()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					// Release the blocked open before failing.
					if w, err := unix.Open(filepath.Join(dir, "fifo"), unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
						unix.Close(w)
					}
					<-done
					t.Fatalf("%s %#x: blocked", c.name, c.flags)
				}
				if c.want != nil {
					if !errors.Is(err, c.want) {
						t.Errorf("%s %#x: %v, want %v", c.name, c.flags, err, c.want)
					}
					if err == nil {
						unix.Close(fd)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s %#x: %v", c.name, c.flags, err)
					continue
				}
				// The stat handed back is that of the opened inode.
				var fst unix.Stat_t
				if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != st.Ino || fst.Dev != st.Dev || st.Size != 3 || st.Mode&unix.S_IFMT != unix.S_IFREG {
					t.Errorf("%s: stat ino %d size %d mode %#o, fd has ino %d (%v)", c.name, st.Ino, st.Size, st.Mode, fst.Ino, err)
				}
				fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
				if fl&unix.O_ACCMODE != c.flags&unix.O_ACCMODE || fl&unix.O_NONBLOCK != 0 {
					t.Errorf("%s: flags %#x, want access %#x without O_NONBLOCK", c.name, fl, c.flags&unix.O_ACCMODE)
				}
				fdfl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				if fdfl&unix.FD_CLOEXEC == 0 {
					t.Errorf("%s: no FD_CLOEXEC", c.name)
				}
				unix.Close(fd)
			}
		})
	}
}

// TestFullReadWrite: WriteFull, PwriteFull, ReadFull and PreadFull move
// whole buffers and report end of file as a short count.
func TestFullReadWrite(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := WriteFull(fd, []byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if err := PwriteFull(fd, []byte("world"), 6); err != nil {
		t.Fatal(err)
	}
	if _, err := Lseek(fd, 0, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	if n, err := ReadFull(fd, buf); err != nil || string(buf[:n]) != "hello world" {
		t.Fatalf("ReadFull: %q %v", buf[:n], err)
	}
	if err := Ftruncate(fd, 5); err != nil {
		t.Fatal(err)
	}
	if n, err := PreadFull(fd, buf, 0); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("after Ftruncate: %q %v", buf[:n], err)
	}
}

// TestPathFdHelpers: ChmodPathFd and ReopenPathFd act on the inode an
// O_PATH fd pinned, not on what the name points to afterwards.
func TestPathFdHelpers(t *testing.T) {
	dir := t.TempDir()
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	if err := os.WriteFile(dir+"/f", []byte("pinned"), 0o600); err != nil {
		t.Fatal(err)
	}
	pfd, err := OpenPathAt(dirfd, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	// The name now points elsewhere: a symlink to another file.
	if err := os.WriteFile(dir+"/other", []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+"/f", dir+"/moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", dir+"/f"); err != nil {
		t.Fatal(err)
	}
	if err := ChmodPathFd(pfd, 0o640); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir+"/moved", &st); err != nil || st.Mode&0o7777 != 0o640 {
		t.Errorf("pinned file mode %o (%v), want 640", st.Mode&0o7777, err)
	}
	if err := unix.Stat(dir+"/other", &st); err != nil || st.Mode&0o7777 != 0o600 {
		t.Errorf("symlink target mode %o (%v), want 600 unchanged", st.Mode&0o7777, err)
	}
	fd, err := ReopenPathFd(pfd, unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 16)
	n, err := unix.Read(fd, buf)
	if err != nil || string(buf[:n]) != "pinned" {
		t.Errorf("reopened: %q %v", buf[:n], err)
	}
}

//go:build linux

package fusefrontend

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

// variants are the filesystem flavours every operation test runs on.
var variants = []struct {
	name string
	cfg  testConfig
}{
	{"gcm", testConfig{}},
	{"xchacha", testConfig{cipher: cryptocore.XChaCha20Poly1305}},
	{"aessiv", testConfig{cipher: cryptocore.AESSIV}},
	{"plaintextnames", testConfig{plaintextNames: true}},
	{"deterministic", testConfig{deterministic: true}},
	{"longnamemax62", testConfig{longNameMax: 62, padded64: true}},
	{"timeouts", testConfig{timeouts: true}},
	{"writeback", testConfig{timeouts: true, writeback: true}},
	{"sharedstorage-kernelcache-noprealloc", testConfig{args: Args{SharedStorage: true, KernelCache: true, NoPrealloc: true}}},
}

// opCase is one operation test; it runs in its own directory dir (a
// plaintext path below the mount) of a shared mount.
type opCase struct {
	name string
	fn   func(t *testing.T, tf *testFS, dir string)
}

var longName = strings.Repeat("L", 200)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7+i/4096)
	}
	return b
}

func errIs(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func statOf(t *testing.T, p string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func listNames(t *testing.T, p string) []string {
	t.Helper()
	ents, err := os.ReadDir(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

var opCases = []opCase{
	{"ReadWrite", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "f")
		data := pattern(3*4096+100, 1)
		mustWrite(t, p, data)
		if got := mustRead(t, p); !bytes.Equal(got, data) {
			t.Fatal("content mismatch")
		}
		if st := statOf(t, p); st.Size != int64(len(data)) {
			t.Fatalf("size %d", st.Size)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		patch := []byte("PATCHED")
		if _, err := f.WriteAt(patch, 4090); err != nil {
			t.Fatal(err)
		}
		copy(data[4090:], patch)
		got := make([]byte, len(data)+10)
		n, err := f.ReadAt(got, 0)
		if err != io.EOF || !bytes.Equal(got[:n], data) {
			t.Fatalf("after patch: n=%d err=%v", n, err)
		}
	}},
	{"EmptyFile", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "empty")
		mustWrite(t, p, nil)
		if st := statOf(t, p); st.Size != 0 {
			t.Fatalf("size %d", st.Size)
		}
		if got := mustRead(t, p); len(got) != 0 {
			t.Fatalf("got %q", got)
		}
	}},
	{"Holes", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "sparse")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte{7}, 9000); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 9001)
		want[9000] = 7
		if got := mustRead(t, p); !bytes.Equal(got, want) {
			t.Fatal("hole content mismatch")
		}
		// a hole far out, then data again
		if _, err := f.WriteAt([]byte("end"), 1<<20); err != nil {
			t.Fatal(err)
		}
		fd := int(f.Fd())
		// Blocks 0 and 1 were never written: a hole at 0, as on ext4.
		hole, err := unix.Seek(fd, 0, unix.SEEK_HOLE)
		if err != nil || hole != 0 {
			t.Fatalf("SEEK_HOLE: %d %v", hole, err)
		}
		data, err := unix.Seek(fd, 20000, unix.SEEK_DATA)
		if err != nil || data != 1<<20 {
			t.Fatalf("SEEK_DATA: %d %v", data, err)
		}
		if _, err := unix.Seek(fd, 1<<21, unix.SEEK_DATA); !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("SEEK_DATA past EOF: %v", err)
		}
		eof, err := unix.Seek(fd, 1<<20, unix.SEEK_HOLE)
		if err != nil || eof != 1<<20+3 {
			t.Fatalf("SEEK_HOLE at end: %d %v", eof, err)
		}
	}},
	{"Truncate", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "t")
		data := pattern(10000, 3)
		mustWrite(t, p, data)
		// without handle
		for _, size := range []int64{5000, 4096, 12000, 0, 8192, 10} {
			if err := os.Truncate(p, size); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, size)
			copy(want, data)
			if size == 12000 {
				copy(want, data[:4096])
				clear(want[4096:])
				copy(want, data[:4096])
			}
			got := mustRead(t, p)
			if int64(len(got)) != size {
				t.Fatalf("size %d: got %d bytes", size, len(got))
			}
			data = got
		}
		// with handle, grow and shrink, check zeros
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		mustWriteAt(t, f, pattern(6000, 9), 0)
		if err := f.Truncate(3000); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(20000); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 20000)
		copy(want, pattern(6000, 9)[:3000])
		if got := mustRead(t, p); !bytes.Equal(got, want) {
			t.Fatal("truncate down/up with handle: content mismatch")
		}
		if st := statOf(t, p); st.Size != 20000 {
			t.Fatalf("size %d", st.Size)
		}
	}},
	{"Append", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "log")
		mustWrite(t, p, []byte("start\n"))
		a, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var want bytes.Buffer
		want.WriteString("start\n")
		for i := range 20 {
			w := a
			if i%2 == 1 {
				w = b
			}
			line := strings.Repeat(string(rune('a'+i)), 100+i*300) + "\n"
			if _, err := w.WriteString(line); err != nil {
				t.Fatal(err)
			}
			want.WriteString(line)
		}
		if got := mustRead(t, p); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("append: got %d bytes want %d", len(got), want.Len())
		}
	}},
	{"OTrunc", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "tr")
		mustWrite(t, p, pattern(5000, 1))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, p); st.Size != 0 {
			t.Fatalf("size after O_TRUNC %d", st.Size)
		}
		f.Write([]byte("new"))
		f.Close()
		if got := mustRead(t, p); string(got) != "new" {
			t.Fatalf("got %q", got)
		}
		// O_CREAT|O_TRUNC on an existing file
		mustWrite(t, p, []byte("x"))
		if got := mustRead(t, p); string(got) != "x" {
			t.Fatalf("got %q", got)
		}
	}},
	{"WriteOnly", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "wo")
		data := pattern(9000, 5)
		mustWrite(t, p, data)
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		mustWriteAt(t, f, []byte("xyz"), 4095) // straddles a block: RMW of two blocks
		f.Close()
		copy(data[4095:], "xyz")
		if got := mustRead(t, p); !bytes.Equal(got, data) {
			t.Fatal("O_WRONLY RMW mismatch")
		}
		// A 0200 file: write-only permission. As root the backing file
		// stays readable for RMW; as a user the read bit is added
		// temporarily (openBacking).
		if err := os.Chmod(p, 0o200); err != nil {
			t.Fatal(err)
		}
		f, err = os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		mustWriteAt(t, f, []byte("Q"), 10)
		f.Close()
		if st := statOf(t, p); st.Mode&0o777 != 0o200 {
			t.Fatalf("mode %o", st.Mode&0o777)
		}
		os.Chmod(p, 0o600)
		data[10] = 'Q'
		if got := mustRead(t, p); !bytes.Equal(got, data) {
			t.Fatal("0200 RMW mismatch")
		}
	}},
	{"ChmodChownUtimens", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "attrs")
		mustWrite(t, p, []byte("a"))
		if err := os.Chmod(p, 0o751); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, p); st.Mode&0o7777 != 0o751 {
			t.Fatalf("mode %o", st.Mode)
		}
		ts := []unix.Timespec{{Sec: 1000, Nsec: 5}, {Sec: 2000, Nsec: 7}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, 0); err != nil {
			t.Fatal(err)
		}
		st := statOf(t, p)
		if st.Atim.Sec != 1000 || st.Mtim.Sec != 2000 || st.Mtim.Nsec != 7 {
			t.Fatalf("times %v %v", st.Atim, st.Mtim)
		}
		// UTIME_OMIT for mtime, UTIME_NOW for atime
		ts = []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, 0); err != nil {
			t.Fatal(err)
		}
		st = statOf(t, p)
		if st.Atim.Sec < 1e9 || st.Mtim.Sec != 2000 {
			t.Fatalf("NOW/OMIT: %v %v", st.Atim, st.Mtim)
		}
		// on an open handle
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Chmod(0o640); err != nil {
			t.Fatal(err)
		}
		if err := unix.Futimes(int(f.Fd()), []unix.Timeval{{Sec: 3000}, {Sec: 4000}}); err != nil {
			t.Fatal(err)
		}
		st = statOf(t, p)
		if st.Mode&0o777 != 0o640 || st.Mtim.Sec != 4000 {
			t.Fatalf("fchmod/futimes: %o %v", st.Mode, st.Mtim)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(p, 1234, 5678); err != nil {
				t.Fatal(err)
			}
			st = statOf(t, p)
			if st.Uid != 1234 || st.Gid != 5678 {
				t.Fatalf("owner %d:%d", st.Uid, st.Gid)
			}
			if err := f.Chown(-1, 42); err != nil {
				t.Fatal(err)
			}
			if st = statOf(t, p); st.Uid != 1234 || st.Gid != 42 {
				t.Fatalf("fchown owner %d:%d", st.Uid, st.Gid)
			}
		}
		// Directories too.
		d := filepath.Join(dir, "adir")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, d); st.Mode&0o7777 != 0o755 {
			t.Fatalf("dir mode %o", st.Mode)
		}
	}},
	{"Symlink", func(t *testing.T, tf *testFS, dir string) {
		for _, target := range []string{"hello.txt", "/abs/path/" + strings.Repeat("x", 300), "../rel"} {
			p := filepath.Join(dir, "s")
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			got, err := os.Readlink(p)
			if err != nil || got != target {
				t.Fatalf("readlink %q %v", got, err)
			}
			if st := statOf(t, p); st.Size != int64(len(target)) || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				t.Fatalf("lstat size %d mode %o", st.Size, st.Mode)
			}
		}
		// long-named symlink, and symlink timestamps (lutimes)
		lp := filepath.Join(dir, longName)
		if err := os.Symlink("t", lp); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(lp); err != nil || got != "t" {
			t.Fatalf("long readlink %q %v", got, err)
		}
		if err := unix.Lutimes(lp, []unix.Timeval{{Sec: 5}, {Sec: 6}}); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, lp); st.Mtim.Sec != 6 {
			t.Fatalf("lutimes: %v", st.Mtim)
		}
		if err := os.Remove(lp); err != nil {
			t.Fatal(err)
		}
	}},
	{"HardLink", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "orig")
		mustWrite(t, p, []byte("shared"))
		for _, name := range []string{"link", longName} {
			l := filepath.Join(dir, name)
			if err := os.Link(p, l); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, l); string(got) != "shared" {
				t.Fatalf("%s: %q", name, got)
			}
		}
		st := statOf(t, p)
		if st.Nlink != 3 || statOf(t, filepath.Join(dir, longName)).Ino != st.Ino {
			t.Fatalf("nlink %d", st.Nlink)
		}
		// write through one link, read through the other
		f, err := os.OpenFile(filepath.Join(dir, "link"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("+more")
		f.Close()
		if got := mustRead(t, filepath.Join(dir, longName)); string(got) != "shared+more" {
			t.Fatalf("got %q", got)
		}
		if err := os.Remove(filepath.Join(dir, longName)); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, p); st.Nlink != 2 {
			t.Fatalf("nlink after unlink %d", st.Nlink)
		}
	}},
	{"LongNames", func(t *testing.T, tf *testFS, dir string) {
		names := []string{strings.Repeat("a", 176), strings.Repeat("b", 255), strings.Repeat("c", 100)}
		for i, n := range names {
			mustWrite(t, filepath.Join(dir, n), []byte{byte(i)})
		}
		d := filepath.Join(dir, strings.Repeat("D", 240))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(d, strings.Repeat("e", 230)), []byte("deep"))
		if err := unix.Mkfifo(filepath.Join(dir, strings.Repeat("f", 210)), 0o600); err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(names), strings.Repeat("D", 240), strings.Repeat("f", 210))
		slices.Sort(want)
		if got := listNames(t, dir); !slices.Equal(got, want) {
			t.Fatalf("listing %v", got)
		}
		if got := mustRead(t, filepath.Join(d, strings.Repeat("e", 230))); string(got) != "deep" {
			t.Fatalf("got %q", got)
		}
		_, err := os.Stat(filepath.Join(dir, strings.Repeat("z", 256)))
		errIs(t, err, syscall.ENAMETOOLONG, "256-byte name")
		// rename long -> short -> long, then remove everything
		a, s := filepath.Join(dir, names[0]), filepath.Join(dir, "short")
		if err := os.Rename(a, s); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(s, filepath.Join(dir, names[2]+"x")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, names[2]+"x"), filepath.Join(d, names[1])); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, filepath.Join(d, names[1])); !bytes.Equal(got, []byte{0}) {
			t.Fatalf("got %v", got)
		}
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		for _, n := range append(names[1:], strings.Repeat("f", 210)) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
		if got := listNames(t, dir); len(got) != 0 {
			t.Fatalf("left over: %v", got)
		}
	}},
	{"Rename", func(t *testing.T, tf *testFS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		mustWrite(t, a, []byte("A"))
		mustWrite(t, b, []byte("B"))
		errIs(t, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE), syscall.EEXIST, "NOREPLACE")
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, a)) != "B" || string(mustRead(t, b)) != "A" {
			t.Fatal("exchange did not swap")
		}
		// exchange a file with a directory, across directories, with long names
		d1, d2 := filepath.Join(dir, "d1"), filepath.Join(dir, "d2")
		os.Mkdir(d1, 0o755)
		os.Mkdir(d2, 0o755)
		mustWrite(t, filepath.Join(d1, "inner"), []byte("in"))
		lf := filepath.Join(d2, longName)
		mustWrite(t, lf, []byte("long"))
		if err := unix.Renameat2(unix.AT_FDCWD, d1, unix.AT_FDCWD, lf, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, filepath.Join(lf, "inner"))) != "in" || string(mustRead(t, d1)) != "long" {
			t.Fatal("exchange dir<->file failed")
		}
		// overwrite
		if err := os.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, b)) != "B" {
			t.Fatal("overwrite")
		}
		// move a directory with contents into another directory: names
		// inside stay valid (it keeps its IV)
		if err := os.Rename(lf, filepath.Join(d2, "moved")); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, filepath.Join(d2, "moved", "inner"))) != "in" {
			t.Fatal("moved dir contents")
		}
		// rename a directory over an empty directory (which holds only its
		// diriv in CIPHERDIR)
		e := filepath.Join(dir, "emptydir")
		os.Mkdir(e, 0o755)
		// (os.Rename refuses directory targets itself; use the syscall)
		if err := unix.Rename(filepath.Join(d2, "moved"), e); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, filepath.Join(e, "inner"))) != "in" {
			t.Fatal("rename over empty dir")
		}
		// rename over a non-empty directory fails
		os.Mkdir(filepath.Join(dir, "full"), 0o755)
		mustWrite(t, filepath.Join(dir, "full", "x"), nil)
		errIs(t, unix.Rename(e, filepath.Join(dir, "full")), syscall.ENOTEMPTY, "rename over non-empty dir")
		// rename to same name is a no-op; hard links of one inode stay
		mustWrite(t, filepath.Join(dir, longName+"1"), []byte("h"))
		os.Link(filepath.Join(dir, longName+"1"), filepath.Join(dir, longName+"2"))
		if err := os.Rename(filepath.Join(dir, longName+"1"), filepath.Join(dir, longName+"2")); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, filepath.Join(dir, longName+"1"))) != "h" {
			t.Fatal("rename between hard links removed the source's name file")
		}
	}},
	{"MkdirRmdir", func(t *testing.T, tf *testFS, dir string) {
		d := filepath.Join(dir, "sub")
		if err := os.Mkdir(d, 0o000); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, d); st.Mode&0o7777 != 0 {
			t.Fatalf("mode %o", st.Mode)
		}
		os.Chmod(d, 0o755)
		mustWrite(t, filepath.Join(d, "f"), nil)
		errIs(t, os.Remove(d), syscall.ENOTEMPTY, "rmdir non-empty")
		os.Remove(filepath.Join(d, "f"))
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		if got := listNames(t, dir); len(got) != 0 {
			t.Fatalf("left: %v", got)
		}
		// no diriv.rmdir leftovers anywhere in the backing dir
		cdir, err := tf.rn.EncryptPath(strings.TrimPrefix(dir, tf.mnt))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tf.cipherEntries(t, cdir) {
			if n != nametransform.DirIVFilename {
				t.Fatalf("backing leftover %q", n)
			}
		}
	}},
	{"Mknod", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "fifo")
		if err := unix.Mkfifo(p, 0o640); err != nil {
			t.Fatal(err)
		}
		st := statOf(t, p)
		if st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Mode&0o777 != 0o640 {
			t.Fatalf("mode %o", st.Mode)
		}
		if os.Geteuid() == 0 {
			c := filepath.Join(dir, "null")
			if err := unix.Mknod(c, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				t.Fatal(err)
			}
			if st := statOf(t, c); st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
				t.Fatalf("char dev %o %x", st.Mode, st.Rdev)
			}
		}
		sock := filepath.Join(dir, "sock")
		if err := unix.Mknod(sock, unix.S_IFSOCK|0o600, 0); err != nil {
			t.Fatal(err)
		}
		if st := statOf(t, sock); st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			t.Fatalf("sock mode %o", st.Mode)
		}
	}},
	{"Statfs", func(t *testing.T, tf *testFS, dir string) {
		var st, want unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		unix.Statfs(tf.cipher, &want)
		if st.Blocks != want.Blocks || st.Bsize != want.Bsize {
			t.Fatalf("statfs %+v want %+v", st, want)
		}
	}},
	{"Locks", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "lock")
		mustWrite(t, p, []byte("x"))
		f1, _ := os.OpenFile(p, os.O_RDWR, 0)
		f2, _ := os.OpenFile(p, os.O_RDWR, 0)
		defer f1.Close()
		defer f2.Close()
		if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		errIs(t, unix.Flock(int(f2.Fd()), unix.LOCK_EX|unix.LOCK_NB), syscall.EWOULDBLOCK, "flock conflict")
		unix.Flock(int(f1.Fd()), unix.LOCK_UN)
		if err := unix.Flock(int(f2.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Start: 0, Len: 10}
		if err := unix.FcntlFlock(f1.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			t.Fatal(err)
		}
		get := unix.Flock_t{Type: unix.F_RDLCK, Start: 5, Len: 1}
		if err := unix.FcntlFlock(f2.Fd(), unix.F_OFD_GETLK, &get); err != nil || get.Type != unix.F_WRLCK {
			t.Fatalf("getlk %v %+v", err, get)
		}
	}},
	{"Xattr", func(t *testing.T, tf *testFS, dir string) {
		p := filepath.Join(dir, "xf")
		mustWrite(t, p, nil)
		d := filepath.Join(dir, "xd")
		os.Mkdir(d, 0o755)
		for _, target := range []string{p, d} {
			vals := map[string][]byte{"user.foo": []byte("bar"), "user.empty": {}, "user.big": pattern(2000, 1)}
			if os.Geteuid() == 0 {
				vals["trusted.t"] = []byte("tv")
			}
			for k, v := range vals {
				if err := unix.Setxattr(target, k, v, 0); err != nil {
					t.Fatalf("set %s: %v", k, err)
				}
			}
			for k, v := range vals {
				buf := make([]byte, 4096)
				n, err := unix.Getxattr(target, k, buf)
				if err != nil || !bytes.Equal(buf[:n], v) {
					t.Fatalf("get %s: %v %q", k, err, buf[:n])
				}
			}
			sz, err := unix.Getxattr(target, "user.big", nil)
			if err != nil || sz != 2000 {
				t.Fatalf("size query %d %v", sz, err)
			}
			_, err = unix.Getxattr(target, "user.big", make([]byte, 10))
			errIs(t, err, syscall.ERANGE, "small buffer")
			buf := make([]byte, 4096)
			n, err := unix.Listxattr(target, buf)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for s := range strings.SplitSeq(string(buf[:n]), "\x00") {
				if s != "" {
					got = append(got, s)
				}
			}
			slices.Sort(got)
			var want []string
			for k := range vals {
				want = append(want, k)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("list %v want %v", got, want)
			}
			errIs(t, unix.Setxattr(target, "user.foo", []byte("x"), unix.XATTR_CREATE), syscall.EEXIST, "XATTR_CREATE")
			if err := unix.Removexattr(target, "user.foo"); err != nil {
				t.Fatal(err)
			}
			_, err = unix.Getxattr(target, "user.foo", buf)
			errIs(t, err, syscall.ENODATA, "after remove")
			_, err = unix.Getxattr(target, "security.capability", buf)
			errIs(t, err, syscall.EOPNOTSUPP, "security.capability")
		}
		// The backing file carries only encrypted names.
		cp, err := tf.rn.EncryptPath(strings.TrimPrefix(p, tf.mnt))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, err := unix.Llistxattr(filepath.Join(tf.cipher, cp), buf)
		if err != nil {
			t.Fatal(err)
		}
		for s := range strings.SplitSeq(string(buf[:n]), "\x00") {
			if s != "" && !strings.HasPrefix(s, nametransform.XattrPrefix) {
				t.Fatalf("backing xattr %q", s)
			}
		}
	}},
}

func init() {
	opCases = append(opCases,
		opCase{"Fsync", func(t *testing.T, tf *testFS, dir string) {
			f, err := os.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Sync(); err != nil {
				t.Fatalf("fsync dir: %v", err)
			}
			p := filepath.Join(dir, "f")
			mustWrite(t, p, []byte("x"))
			g, _ := os.OpenFile(p, os.O_RDWR, 0)
			defer g.Close()
			if err := g.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fdatasync(int(g.Fd())); err != nil {
				t.Fatal(err)
			}
		}},
		opCase{"ACL", func(t *testing.T, tf *testFS, dir string) {
			// user::rw- user:1000:r-- group::r-- mask::r-- other::r--
			// (an ACL equivalent to the mode bits would not be stored)
			acl := []byte{2, 0, 0, 0,
				1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
				2, 0, 4, 0, 0xe8, 0x03, 0, 0,
				4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
				0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
				0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff}
			p := filepath.Join(dir, "f")
			mustWrite(t, p, nil)
			err := unix.Setxattr(p, nametransform.ACLAccess, acl, 0)
			if errors.Is(err, syscall.EOPNOTSUPP) {
				t.Skip("kernel does not pass POSIX ACLs to this mount:", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, err := unix.Getxattr(p, nametransform.ACLAccess, buf)
			if err != nil {
				t.Fatalf("get ACL: %v", err)
			}
			if !bytes.Equal(buf[:n], acl) {
				t.Fatalf("get ACL %v %x", err, buf[:n])
			}
		}},
	)
}

func mustWriteAt(t *testing.T, f *os.File, b []byte, off int64) {
	t.Helper()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestOps runs every operation case on every filesystem variant.
func TestOps(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			tf := mountFS(t, v.cfg)
			for _, c := range opCases {
				t.Run(c.name, func(t *testing.T) {
					dir := tf.path(c.name)
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					c.fn(t, tf, dir)
				})
			}
		})
	}
}

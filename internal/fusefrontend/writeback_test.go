//go:build linux

package fusefrontend

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// The writeback cache keeps written data in the kernel; these tests check
// that what finally reaches CIPHERDIR is right. A second mount of the same
// CIPHERDIR without any caching reads the result, so that the page cache
// of the first mount cannot answer for the filesystem.

var writebackCfg = testConfig{timeouts: true, writeback: true}

// reread returns the content of rel as a fresh uncached mount of tf's
// CIPHERDIR sees it.
func (tf *testFS) reread(t *testing.T, rel string) []byte {
	t.Helper()
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	return mustRead(t, other.path(rel))
}

// mmapOps applies the same sequence of write(2), mmap stores and
// truncates to p and returns nothing; it is run on the mount and on a
// plain directory.
func mmapOps(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(pattern(3*4096+100, 1)); err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, 4*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	// write(2) is visible through the mapping ...
	if !bytes.Equal(m[:3*4096+100], pattern(3*4096+100, 1)) {
		t.Fatal("mapping does not show written data")
	}
	// ... and stores through the mapping through read(2).
	copy(m[100:], "through mmap")
	copy(m[5000:], bytes.Repeat([]byte{0xAB}, 3000))
	got := make([]byte, 3000)
	if _, err := f.ReadAt(got, 5000); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{0xAB}, 3000)) {
		t.Fatalf("read(2) after mmap store: %v", err)
	}
	if _, err := f.WriteAt([]byte("pwrite over mapping"), 6000); err != nil {
		t.Fatal(err)
	}
	if string(m[6000:6019]) != "pwrite over mapping" {
		t.Fatal("mapping does not show pwrite")
	}
	// Across truncates: shrink into the second block, grow again; the
	// mapped bytes between must read as zeros.
	if err := f.Truncate(7000); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(15000); err != nil {
		t.Fatal(err)
	}
	for i := 7000; i < 15000; i++ {
		if m[i] != 0 {
			t.Fatalf("byte %d = %d after truncate and extend, want 0", i, m[i])
		}
	}
	copy(m[14000:], "tail via mmap")
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// mmapChildEnv names the file a child copy of the test binary runs
// mmapOps (or mmapStore) on (see mmapInChild).
const mmapChildEnv = "GOCRYPTFS_TEST_MMAP_FILE"

// mmapInChild runs mmapOps on p in a child copy of the test binary. A
// process must not page-fault on a FUSE mount it serves itself: the
// faulting thread runs no Go code until the process's own server answers
// the READ, so a garbage collection that stops the world meanwhile waits
// for that thread forever, with the server goroutines stopped
// (TestWritebackMmap hung under load that way). The child serves nothing.
func mmapInChild(t *testing.T, p string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), mmapChildEnv+"="+p)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mmap child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("mmap child did not run the test:\n%s", out)
	}
}

// TestWritebackMmap: write through mmap and read through read(2) and the
// other way round, across a truncate; CIPHERDIR ends up with what a plain
// directory holds. The mount's side runs in a child process
// (mmapInChild).
func TestWritebackMmap(t *testing.T) {
	if p := os.Getenv(mmapChildEnv); p != "" {
		mmapOps(t, p)
		return
	}
	tf := mountFS(t, writebackCfg)
	plain := filepath.Join(t.TempDir(), "m")
	mmapOps(t, plain)
	mmapInChild(t, tf.path("m"))
	want := mustRead(t, plain)
	if got := mustRead(t, tf.path("m")); !bytes.Equal(got, want) {
		t.Fatal("mount differs from plain directory")
	}
	if got := tf.reread(t, "m"); !bytes.Equal(got, want) {
		t.Fatalf("CIPHERDIR holds %d bytes that differ from the plain directory's %d", len(got), len(want))
	}
}

// TestWritebackODirect: O_DIRECT reads see data still in the page cache of
// another descriptor, and cached reads see O_DIRECT writes.
func TestWritebackODirect(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	p := tf.path("d")
	cached, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	data := pattern(3*4096, 9)
	if _, err := cached.Write(data); err != nil {
		t.Fatal(err)
	}
	direct, err := os.OpenFile(p, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	got := make([]byte, len(data))
	if n, err := direct.ReadAt(got, 0); err != nil || n != len(data) || !bytes.Equal(got, data) {
		t.Fatalf("O_DIRECT read of cached data: n=%d err=%v equal=%v", n, err, bytes.Equal(got, data))
	}
	// An unaligned direct write in the middle, then past the end.
	if _, err := direct.WriteAt([]byte("direct"), 5000); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.WriteAt([]byte("beyond"), 20000); err != nil {
		t.Fatal(err)
	}
	copy(data[5000:], "direct")
	data = append(data, make([]byte, 20000-len(data))...)
	data = append(data, "beyond"...)
	got = make([]byte, len(data)+10)
	n, err := cached.ReadAt(got, 0)
	if n != len(data) || !bytes.Equal(got[:n], data) {
		t.Fatalf("cached read after O_DIRECT writes: n=%d err=%v", n, err)
	}
	if got := tf.reread(t, "d"); !bytes.Equal(got, data) {
		t.Fatal("CIPHERDIR content differs")
	}
}

// TestWritebackAppendProcesses: two processes append records to one file
// at the same time (dd with oflag=append, one write(2) per record); every
// record lands whole and none is lost, on the mount as in CIPHERDIR.
func TestWritebackAppendProcesses(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	const recs, size = 400, 64
	src := t.TempDir()
	p := tf.path("log")
	mustWrite(t, p, []byte("header\n"))
	var cmds []*exec.Cmd
	for w := 0; w < 2; w++ {
		var b bytes.Buffer
		for i := 0; i < recs; i++ {
			fmt.Fprintf(&b, "%c%0*d\n", 'A'+w, size-2, i)
		}
		in := filepath.Join(src, fmt.Sprint(w))
		mustWrite(t, in, b.Bytes())
		cmd := exec.Command("dd", "if="+in, "of="+p, "oflag=append", "conv=notrunc", fmt.Sprintf("bs=%d", size), "status=none")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, got []byte) {
		t.Helper()
		if !bytes.HasPrefix(got, []byte("header\n")) || len(got) != 7+2*recs*size {
			t.Fatalf("%s: %d bytes, want %d", what, len(got), 7+2*recs*size)
		}
		next := [2]int{}
		for off := 7; off < len(got); off += size {
			r := got[off : off+size]
			w := int(r[0] - 'A')
			if w < 0 || w > 1 || string(r[1:]) != fmt.Sprintf("%0*d\n", size-2, next[w]) {
				t.Fatalf("%s: bad record at %d: %q", what, off, r)
			}
			next[w]++
		}
	}
	check("mount", mustRead(t, p))
	check("CIPHERDIR", tf.reread(t, "log"))
}

// TestWritebackAppendHandleReused: data written at an offset through a
// plain descriptor may be written back through another, O_APPEND,
// handle of the same file; it must still land at its offset.
func TestWritebackAppendHandleReused(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	p := tf.path("a")
	mustWrite(t, p, pattern(10000, 2))
	app, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	rw, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.WriteAt([]byte("middle"), 3000); err != nil {
		t.Fatal(err)
	}
	// Closing rw first leaves app as the only writable handle for the
	// data that is still dirty.
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Write([]byte("end")); err != nil {
		t.Fatal(err)
	}
	if err := app.Sync(); err != nil {
		t.Fatal(err)
	}
	want := pattern(10000, 2)
	copy(want[3000:], "middle")
	want = append(want, "end"...)
	if got := tf.reread(t, "a"); !bytes.Equal(got, want) {
		t.Fatalf("CIPHERDIR: %d bytes, want %d (equal=%v)", len(got), len(want), bytes.Equal(got, want))
	}
}

// TestWritebackWriteOnly: a file opened write-only gets partial-page
// writes (the kernel reads the rest of the page through the write-only
// handle), also when its mode is 0200.
func TestWritebackWriteOnly(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	p := tf.path("wo")
	mustWrite(t, p, pattern(9000, 4))
	if err := os.Chmod(p, 0o200); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("xy"), 4097); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	want := pattern(9000, 4)
	copy(want[4097:], "xy")
	if got := tf.reread(t, "wo"); !bytes.Equal(got, want) {
		t.Fatal("CIPHERDIR content differs")
	}
}

// TestWritebackMtime: the modification time the kernel keeps for cached
// writes (and an explicit utimes after them) is what CIPHERDIR ends up
// with once the data is written back.
func TestWritebackMtime(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	p := tf.path("t")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	ts := []unix.Timespec{{Sec: 1000000000, Nsec: 5}, {Sec: 1234567890, Nsec: 123456789}}
	if err := unix.UtimesNano(p, ts); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mtim != ts[1] || st.Size != 5 {
		t.Fatalf("mount: mtime %v size %d", st.Mtim, st.Size)
	}
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	if err := unix.Stat(other.path("t"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mtim != ts[1] || st.Size != 5 {
		t.Fatalf("CIPHERDIR: mtime %v size %d, want %v and 5", st.Mtim, st.Size, ts[1])
	}
}

// TestKillSuidGid: read-write mounts negotiate CAP_HANDLE_KILLPRIV_V2, so
// the filesystem must clear set-id bits itself when another user writes
// or truncates. Side by side with a plain directory, with and without the
// writeback cache: writes and truncates by nobody clear set-user-ID and
// set-group-ID (unless the file is not group-executable and the writer is
// in its group), writes by root keep them.
func TestKillSuidGid(t *testing.T) {
	for _, wb := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeback=%v", wb), func(t *testing.T) { testKillSuidGid(t, wb) })
	}
}

func testKillSuidGid(t *testing.T, writeback bool) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	testutil.RequireFuse(t)
	cipher := t.TempDir()
	os.Chmod(cipher, 0o777)
	tf := mountExistingOpts(t, testConfig{timeouts: true, writeback: writeback, args: Args{AllowOther: true}}, cipher, true, nil)
	os.Chmod(filepath.Dir(tf.mnt), 0o755)
	plain := plainDir(t)
	cases := []struct {
		name   string
		mode   uint32
		asUser bool
		script string
	}{
		{"write-ugx", 0o6777, true, "printf x >> wx"},
		{"write-g-noexec", 0o6767, true, "printf x | dd of=wg conv=notrunc status=none"},
		{"truncate", 0o4777, true, "truncate -s 3 tr"},
		{"open-trunc", 0o6777, true, ": > ot"},
		{"root-write", 0o6777, false, "printf x >> rw"},
		{"write-g-ingroup", 0o2767, true, "printf x >> gi"},
	}
	// file name = first word after the redirection, per case
	names := map[string]string{"write-ugx": "wx", "write-g-noexec": "wg", "truncate": "tr", "open-trunc": "ot", "root-write": "rw", "write-g-ingroup": "gi"}
	for _, dir := range []string{plain, tf.mnt} {
		for _, c := range cases {
			p := filepath.Join(dir, names[c.name])
			mustWrite(t, p, []byte("hello"))
			if c.name == "write-g-ingroup" {
				// the writer is in the file's group: set-group-ID
				// without group execution stays
				if err := unix.Chown(p, 0, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if err := unix.Chmod(p, c.mode); err != nil {
				t.Fatal(err)
			}
			uid := uint32(0)
			if c.asUser {
				uid = 65534
			}
			if out, err := runAs(dir, uid, 65534, nil, c.script); err != nil {
				t.Fatalf("%s in %s: %v: %s", c.name, dir, err, out)
			}
		}
	}
	other := mountExisting(t, testConfig{}, cipher, false)
	for _, c := range cases {
		n := names[c.name]
		want := statOf(t, filepath.Join(plain, n)).Mode & 0o7777
		for _, view := range []string{tf.mnt, other.mnt} {
			if got := statOf(t, filepath.Join(view, n)).Mode & 0o7777; got != want {
				t.Errorf("%s (%s): mode %o, plain directory %o", c.name, view, got, want)
			}
		}
	}
}

// TestWritebackMtimeKept: under the writeback cache the kernel sets a
// file's mtime at write(2) time and sends it later, while its page-cache
// WRITEs may still be arriving; each of their pwrites would move the
// backing mtime past the one the mount showed. After the file is closed,
// a second mount of the CIPHERDIR (what the next mount or the reference
// sees) must show the same mtime as the first did, for files written in
// many pieces, rewritten and extended.
func TestWritebackMtimeKept(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	want := map[string]unix.Timespec{}
	for i := range 12 {
		name := fmt.Sprintf("f%d", i)
		writePieces(t, tf.path(name), os.O_CREATE, 40*(i+1), i)
		want[name] = mtimeOf(t, tf.path(name))
	}
	tf.checkMtimes(t, want)
}

// writePieces opens p with flag|O_RDWR and writes n pieces of 3000 bytes
// at 3000*j+off, then closes it.
func writePieces(t *testing.T, p string, flag, n, off int) {
	t.Helper()
	piece := make([]byte, 3000)
	f, err := os.OpenFile(p, flag|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for j := range n {
		piece[0] = byte(j)
		if _, err := f.WriteAt(piece, int64(j*len(piece)+off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func mtimeOf(t *testing.T, p string) unix.Timespec {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Mtim
}

// checkMtimes compares the mtimes the mount showed with those a second,
// uncached mount of the same CIPHERDIR sees.
func (tf *testFS) checkMtimes(t *testing.T, want map[string]unix.Timespec) {
	t.Helper()
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	for name, ts := range want {
		if got := mtimeOf(t, other.path(name)); got != ts {
			t.Errorf("%s: mtime %v through a second mount, the mount showed %v", name, got, ts)
		}
	}
}

// TestWritebackMtimeKeptTrunc: as TestWritebackMtimeKept for files that
// are created, written and then rewritten through an O_TRUNC open (the
// truncate moves the backing mtime past the one known from the create).
func TestWritebackMtimeKeptTrunc(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	want := map[string]unix.Timespec{}
	for i := range 6 {
		name := fmt.Sprintf("t%d", i)
		writePieces(t, tf.path(name), os.O_CREATE|os.O_EXCL, 20*(i+1), i)
		writePieces(t, tf.path(name), os.O_TRUNC, 20*(i+1), i)
		want[name] = mtimeOf(t, tf.path(name))
	}
	tf.checkMtimes(t, want)
}

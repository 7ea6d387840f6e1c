//go:build linux

package fusefrontend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// fullChunk is the size of the writers' write(2) calls.
const fullChunk = 128 << 10

// fullPattern is the byte at file offset i: never zero, so that a byte that
// was lost (a hole reads as zeros) is told apart from one that was stored,
// and different at nearby offsets, so that misplaced data shows.
func fullPattern(i int64) byte { return byte(i%251) + 1 }

// fullWriter is the outcome of one writer of runFullWriters.
type fullWriter struct {
	name string
	// written is the number of bytes whose write(2) succeeded; synced
	// is how many of them a successful fsync(2) acknowledged.
	written, synced int64
	// writeErr ended the write loop (nil: the loop reached its cap).
	writeErr error
	// fsyncErr is the first error of any fsync, closeErr that of close.
	fsyncErr, closeErr error
	// hook, if set, runs once when hookAt bytes have been written.
	hook   func()
	hookAt int64
}

// write writes fullChunk-sized pieces of fullPattern to p until a write
// fails or limit bytes are written, with an fsync every syncEvery bytes,
// then fsyncs and closes.
func (w *fullWriter) write(p string, limit, syncEvery int64) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.writeErr = fmt.Errorf("open: %w", err)
		return
	}
	buf := make([]byte, fullChunk)
	sync := func() {
		if err := f.Sync(); err != nil {
			if w.fsyncErr == nil {
				w.fsyncErr = err
			}
		} else if w.fsyncErr == nil {
			w.synced = w.written
		}
	}
	for w.written < limit {
		for i := range buf {
			buf[i] = fullPattern(w.written + int64(i))
		}
		n, err := f.Write(buf)
		w.written += int64(n)
		if err != nil {
			w.writeErr = err
			break
		}
		if w.written%syncEvery == 0 {
			sync()
		}
		if w.hook != nil && w.written >= w.hookAt {
			w.hook()
			w.hook = nil
		}
	}
	sync()
	w.closeErr = f.Close()
}

// TestFullDiskWriters writes files in 128 KiB write(2) calls into a
// CIPHERDIR on a small ext4 image and on a small tmpfs until a write
// fails, with one writer and with two at once, with and without the
// writeback cache, and checks the contract of docs/cli.md ("A full
// CIPHERDIR"):
//   - the write loop ends with ENOSPC, at most one write(2) call per
//     writer past what the file holds afterwards;
//   - a file that lost data was told so by fsync(2) or close(2), and
//     everything a successful fsync acknowledged is there;
//   - the file reads back the same before and after a remount: the
//     bytes written, or zeros where a reported loss was, never data from
//     the page cache that was not stored.
//
// The large tmpfs starts with more free space than lowSpaceHeadroom, so
// its writers open their files while the page cache takes writes and cross
// into the low-space mode while they write.
func TestFullDiskWriters(t *testing.T) {
	testutil.RequireFuse(t)
	for _, backing := range []string{"ext4", "tmpfs", "tmpfs-large"} {
		for _, wb := range []bool{true, false} {
			for _, writers := range []int{1, 2} {
				name := fmt.Sprintf("%s/%s/%d", backing, map[bool]string{true: "writecache", false: "nowritecache"}[wb], writers)
				t.Run(name, func(t *testing.T) {
					if backing == "tmpfs-large" && !wb {
						t.Skip("without the writeback cache the large tmpfs adds nothing")
					}
					runFullWriters(t, backing, wb, writers)
				})
			}
		}
	}
}

// TestFullDiskFilledBehind fills the backing filesystem from outside the
// mount while a writer that has plenty of room by the last look is
// writing: its write-backs fail before the mount has seen the space go.
// The writer must still get ENOSPC after at most the kernel's dirty data
// (less than the headroom) past the filling, be told by fsync or close,
// and no byte may read back as written unless it was stored. (Here the
// file may show more bytes than it holds until the kernel forgets it: see
// docs/cli.md 5.5.)
func TestFullDiskFilledBehind(t *testing.T) {
	testutil.RequireFuse(t)
	size := lowSpaceHeadroom() + 64<<20
	dir := t.TempDir()
	testutil.MountTmpfs(t, dir, fmt.Sprintf("size=%d", size))
	cipher := filepath.Join(dir, "cipher")
	if err := os.Mkdir(cipher, 0o755); err != nil {
		t.Fatal(err)
	}
	tf := mountExisting(t, writebackCfg, cipher, true)
	w := &fullWriter{name: "w0", hookAt: 8 << 20, hook: func() {
		// 1 MiB short of full, then the rest in small steps: the
		// last look at the free space is still far above the
		// headroom.
		filler, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			t.Error(err)
			return
		}
		defer filler.Close()
		buf := make([]byte, 1<<20)
		for {
			if _, err := filler.Write(buf); err != nil {
				break
			}
		}
	}}
	w.write(tf.path(w.name), 4*size, 1<<40)
	before := mustRead(t, tf.path(w.name))
	if err := tf.srv.Unmount(); err != nil {
		t.Fatalf("unmount: %v", err)
	}
	tf2 := mountExisting(t, writebackCfg, cipher, false)
	after := mustRead(t, tf2.path(w.name))
	t.Logf("%s: %d bytes written, write: %v, fsync: %v, close: %v; %d bytes stored",
		w.name, w.written, w.writeErr, w.fsyncErr, w.closeErr, goodPrefix(after))
	if !errors.Is(w.writeErr, syscall.ENOSPC) {
		t.Fatalf("write: %v, want ENOSPC", w.writeErr)
	}
	if past := w.written - 8<<20; past > lowSpaceHeadroom() {
		t.Errorf("%d bytes accepted after the disk was filled, more than the headroom %d", past, lowSpaceHeadroom())
	}
	for i, c := range before {
		if c == fullPattern(int64(i)) && (i >= len(after) || after[i] != c) {
			t.Fatalf("byte %d read back as written before the remount, but it was not stored", i)
		}
		if c != 0 && c != fullPattern(int64(i)) {
			t.Fatalf("byte %d reads back as %#x", i, c)
		}
	}
	if goodPrefix(after) < w.written && w.fsyncErr == nil && w.closeErr == nil {
		t.Errorf("%d of %d bytes lost, but neither fsync nor close reported an error", w.written-goodPrefix(after), w.written)
	}
}

func runFullWriters(t *testing.T, backing string, wb bool, writers int) {
	var dir string
	var size int64
	switch backing {
	case "ext4":
		size = 12 << 20
		dir = mountImage(t, "ext4", int(size>>20))
	case "tmpfs":
		size = 12 << 20
		dir = t.TempDir()
		testutil.MountTmpfs(t, dir, fmt.Sprintf("size=%d", size))
	case "tmpfs-large":
		size = lowSpaceHeadroom() + 24<<20
		dir = t.TempDir()
		testutil.MountTmpfs(t, dir, fmt.Sprintf("size=%d", size))
	}
	cipher := filepath.Join(dir, "cipher")
	if err := os.Mkdir(cipher, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig{timeouts: true, writeback: wb}
	tf := mountExisting(t, cfg, cipher, true)
	// Far more than fits: a writer that gets there was never stopped.
	limit := 4 * size
	ws := make([]*fullWriter, writers)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &fullWriter{name: fmt.Sprintf("w%d", i)}
		wg.Go(func() { ws[i].write(tf.path(ws[i].name), limit, 4<<20) })
	}
	wg.Wait()
	before := make([][]byte, writers)
	for i, w := range ws {
		before[i] = mustRead(t, tf.path(w.name))
	}
	if err := tf.srv.Unmount(); err != nil {
		t.Fatalf("unmount: %v", err)
	}
	tf2 := mountExisting(t, cfg, cipher, false)
	for i, w := range ws {
		after := mustRead(t, tf2.path(w.name))
		t.Logf("%s: %d bytes written (%d synced), write: %v, fsync: %v, close: %v; %d bytes stored",
			w.name, w.written, w.synced, w.writeErr, w.fsyncErr, w.closeErr, goodPrefix(after))
		checkFullWriter(t, w, before[i], after)
	}
}

// goodPrefix is the length of the prefix of b that holds fullPattern.
func goodPrefix(b []byte) int64 {
	for i, c := range b {
		if c != fullPattern(int64(i)) {
			return int64(i)
		}
	}
	return int64(len(b))
}

func checkFullWriter(t *testing.T, w *fullWriter, before, after []byte) {
	t.Helper()
	checkFullWriterBound(t, w, before, after, fullChunk)
}

// checkFullWriterBound checks the outcome of w: at most bound bytes lost.
func checkFullWriterBound(t *testing.T, w *fullWriter, before, after []byte, bound int64) {
	t.Helper()
	if w.writeErr == nil {
		t.Fatalf("%s: %d bytes written without an error", w.name, w.written)
	}
	if !errors.Is(w.writeErr, syscall.ENOSPC) {
		t.Fatalf("%s: write failed with %v, want ENOSPC", w.name, w.writeErr)
	}
	if string(before) != string(after) {
		t.Errorf("%s: %d bytes read back before the remount (%d of them as written), %d after (%d)",
			w.name, len(before), goodPrefix(before), len(after), goodPrefix(after))
	}
	good := goodPrefix(after)
	if int64(len(after)) != w.written {
		t.Errorf("%s: file has %d bytes, %d were written", w.name, len(after), w.written)
	}
	var lost int64
	for i, c := range after {
		if c == fullPattern(int64(i)) {
			continue
		}
		if c != 0 {
			t.Errorf("%s: byte %d is %#x, neither what was written nor a reported loss", w.name, i, c)
			break
		}
		lost++
	}
	if lost > bound {
		t.Errorf("%s: %d bytes accepted by write(2) were lost, more than %d", w.name, lost, bound)
	}
	if lost > 0 && w.fsyncErr == nil && w.closeErr == nil {
		t.Errorf("%s: %d of %d bytes lost, but neither fsync nor close reported an error", w.name, lost, w.written)
	}
	if good < w.synced {
		t.Errorf("%s: only %d bytes stored, fsync acknowledged %d", w.name, good, w.synced)
	}
}

// TestFullDiskMmap maps a file created while CIPHERDIR is almost full,
// which is opened write-through (FOPEN_DIRECT_IO): a shared mapping must
// still work (CAP_DIRECT_IO_ALLOW_MMAP) and its stores reach the file.
func TestFullDiskMmap(t *testing.T) {
	if p := os.Getenv(mmapChildEnv); p != "" {
		mmapStore(t, p)
		return
	}
	testutil.RequireFuse(t)
	dir := t.TempDir()
	testutil.MountTmpfs(t, dir, "size=12m")
	tf := mountExisting(t, writebackCfg, dir, true)
	// The mapping is touched in a child process (see mmapInChild).
	mmapInChild(t, tf.path("m"))
	if got := tf.reread(t, "m"); string(got[4096:4096+19]) != "stored through mmap" {
		t.Errorf("after the mapping: %q", got[4096:4096+32])
	}
}

// mmapStore creates p with 8 KiB, stores a string into its second page
// through a shared mapping, and syncs it.
func mmapStore(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(8192); err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatalf("shared mmap of a file created on an almost full CIPHERDIR: %v", err)
	}
	copy(m[4096:], "stored through mmap")
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSpaceGuardWrote is the cost the free-space watch adds to each
// WRITE while CIPHERDIR has room (no statfs per call, no allocation).
func BenchmarkSpaceGuardWrote(b *testing.B) {
	fd, err := unix.Open(b.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	g := newSpaceGuard(fd, func() {})
	g.headroom = 0
	b.ReportAllocs()
	for b.Loop() {
		g.wrote(1 << 20)
	}
}

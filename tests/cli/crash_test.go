package cli_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"gocryptfs/internal/testutil"
)

// crashChunk is the unit the crash test writes and checks: one plaintext
// content block.
const crashChunk = 4096

// crashData is the content of chunk i of a file written with generation
// gen: every chunk differs, so a chunk at the wrong place or from the
// wrong generation is recognized.
func crashData(gen, i int) []byte {
	b := make([]byte, crashChunk)
	for j := 0; j < crashChunk; j += 8 {
		binary.LittleEndian.PutUint64(b[j:], uint64(gen)<<48|uint64(i)<<20|uint64(j))
	}
	return b
}

// TestCrashKill9 kills the daemon (SIGKILL) while files are being written
// through the default mount (writeback cache on). After mounting again,
// everything that was fsynced before the kill reads back intact, and the
// files that were being written show in every block either one of the
// versions written, zeros (a block never written), or an I/O error:
// never wrong plaintext.
func TestCrashKill9(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	pid := daemonPid(t, mnt)
	if pid == 0 {
		t.Fatal("daemon not found")
	}
	const synced, chunks = 4, 64
	for f := 0; f < synced; f++ {
		writeChunks(t, filepath.Join(mnt, "synced"+string(rune('0'+f))), 1, chunks, true)
	}
	// "rewritten" holds generation 1 (fsynced) and is being overwritten
	// with generation 2; "growing" is being appended to.
	writeChunks(t, filepath.Join(mnt, "rewritten"), 1, chunks, true)
	done := make(chan error, 1)
	var stop atomic.Bool
	var growSynced atomic.Int64 // chunks of growing fsynced before the kill
	progress := make(chan struct{}, 1)
	go func() {
		rw, err := os.OpenFile(filepath.Join(mnt, "rewritten"), os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		defer rw.Close()
		gr, err := os.Create(filepath.Join(mnt, "growing"))
		if err != nil {
			done <- err
			return
		}
		defer gr.Close()
		for i := 0; !stop.Load(); i++ {
			if _, err := rw.WriteAt(crashData(2, i%chunks), int64(i%chunks)*crashChunk); err != nil {
				done <- err
				return
			}
			// growing wraps at 16 MiB: with the writeback cache, writes
			// into the page cache may go on for a while after the kill.
			if _, err := gr.WriteAt(crashData(3, i%4096), int64(i%4096)*crashChunk); err != nil {
				done <- err
				return
			}
			if i%16 == 15 && i < 4096 {
				if err := gr.Sync(); err != nil {
					done <- err
					return
				}
				growSynced.Store(int64(i + 1))
			}
			if i == 2*chunks {
				progress <- struct{}{}
			}
		}
		done <- nil
	}()
	select {
	case <-progress:
	case err := <-done:
		t.Fatalf("writer stopped before the kill: %v", err)
	}
	fsynced := growSynced.Load()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	t.Logf("writer ended with: %v", <-done)
	if out, err := exec.Command("fusermount3", "-u", "-z", mnt).CombinedOutput(); err != nil {
		t.Fatalf("fusermount3 -u -z: %v: %s", err, out)
	}
	testutil.WaitFor(testutil.RunTimeout, func() bool { return processGone(pid) })

	mnt2 := mountFS(t, dir, "-extpass", "echo test")
	for f := 0; f < synced; f++ {
		p := filepath.Join(mnt2, "synced"+string(rune('0'+f)))
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for i := 0; i < chunks; i++ {
			want = append(want, crashData(1, i)...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: fsynced content changed", p)
		}
	}
	checkChunks(t, filepath.Join(mnt2, "rewritten"), 1, 2)
	checkChunks(t, filepath.Join(mnt2, "growing"), 3)
	// Only the fsynced prefix: a block past it may be torn (EIO).
	gf, err := os.Open(filepath.Join(mnt2, "growing"))
	if err != nil {
		t.Fatal(err)
	}
	defer gf.Close()
	got := make([]byte, fsynced*crashChunk)
	if n, err := gf.ReadAt(got, 0); n != len(got) {
		t.Fatalf("growing: %d bytes readable (%v), %d chunks were fsynced", n, err, fsynced)
	}
	for i := 0; i < int(fsynced); i++ {
		if !bytes.Equal(got[i*crashChunk:(i+1)*crashChunk], crashData(3, i)) {
			t.Fatalf("growing: fsynced chunk %d changed", i)
		}
	}
	t.Logf("growing: %d chunks fsynced before the kill", fsynced)
}

// writeChunks writes chunks chunks of generation gen to a new file p.
func writeChunks(t *testing.T, p string, gen, chunks int, sync bool) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < chunks; i++ {
		if _, err := f.Write(crashData(gen, i)); err != nil {
			t.Fatal(err)
		}
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkChunks reads p chunk by chunk; each must be the chunk of one of gens
// at its index, all zeros, or unreadable (EIO). The last chunk may be
// short.
func checkChunks(t *testing.T, p string, gens ...int) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, crashChunk)
	var good, zero, bad int
	for i := 0; ; i++ {
		n, err := f.ReadAt(buf, int64(i)*crashChunk)
		if n == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("%s chunk %d: %v", p, i, err)
			}
			bad++
			continue
		}
		ok := bytes.Equal(buf[:n], make([]byte, n))
		if ok {
			zero++
		}
		for _, g := range gens {
			if bytes.Equal(buf[:n], crashData(g, i)[:n]) {
				ok = true
				good++
			}
		}
		if !ok {
			t.Fatalf("%s chunk %d (%d bytes): wrong plaintext", p, i, n)
		}
	}
	t.Logf("%s: %d chunks as written, %d zero, %d unreadable", filepath.Base(p), good, zero, bad)
}

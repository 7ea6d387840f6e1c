package contentio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// threadReadCalls returns the number of read system calls (read, pread,
// readv, ...) the calling thread made so far (syscr of
// /proc/thread-self/io); ok is false where the kernel does not account
// them.
func threadReadCalls(t *testing.T) (n uint64, ok bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "syscr: "); found {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n, true
		}
	}
	return 0, false
}

// countReadCalls returns how many read system calls fn makes on the
// calling thread, or ok false where they cannot be counted. The caller
// has locked its goroutine to the thread, and fn must not start
// goroutines that read.
func countReadCalls(t *testing.T, fn func()) (n uint64, ok bool) {
	t.Helper()
	// What one measurement itself costs, counted between two of them.
	a, ok := threadReadCalls(t)
	if !ok {
		return 0, false
	}
	b, _ := threadReadCalls(t)
	c, _ := threadReadCalls(t)
	fn()
	d, _ := threadReadCalls(t)
	return d - c - (b - a), true
}

// TestSmallFileOnePread: the first READ of a small file, with the file
// ID not cached yet, fetches header and data in one pread, and a short
// read that ends inside a block is the end of file without a second
// pread. Only a file that ends on a block boundary needs the pread that
// returns 0. The content is right for every size around the boundaries.
func TestSmallFileOnePread(t *testing.T) {
	wantPreads := map[int]uint64{0: 1, 1: 1, 4095: 1, 4096: 2, 4097: 1, 5000: 1, 3 * 4096: 2}
	for _, c := range allCiphers {
		ce := newCE(t, c)
		for _, size := range []int{0, 1, 4095, 4096, 4097, 5000, 3 * 4096} {
			t.Run(fmt.Sprintf("%v/%d", c, size), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "f")
				want := make([]byte, size)
				for i := range want {
					want[i] = byte(i * 7)
				}
				w := openPath(t, NewTable(), ce, path, Options{})
				if _, err := w.WriteAt(want, 0); err != nil {
					t.Fatal(err)
				}
				w.Close()
				// A fresh table: the file ID is not cached.
				r := openPath(t, NewTable(), ce, path, Options{})
				defer r.Close()
				buf := make([]byte, 128<<10)
				var n int
				var err error
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				preads, counted := countReadCalls(t, func() { n, err = r.ReadAt(buf, 0) })
				if n != size || (err != io.EOF) {
					t.Fatalf("ReadAt: n=%d err=%v, want %d and io.EOF", n, err, size)
				}
				if !bytes.Equal(buf[:n], want) {
					t.Fatal("content differs")
				}
				if !counted {
					t.Log("no per-thread read accounting (/proc/thread-self/io); pread count not checked")
				} else if preads != wantPreads[size] {
					t.Errorf("%d preads, want %d", preads, wantPreads[size])
				}
				// A second read, with the ID cached, gives the same.
				if n, err := r.ReadAt(buf, 0); n != size || !bytes.Equal(buf[:n], want) {
					t.Fatalf("second ReadAt: n=%d err=%v", n, err)
				}
			})
		}
	}
}

// TestSmallFileCorruptHeader: a bad header fails the read with EIO,
// whether it came with the data (a read from block 0) or alone (a read
// further in, the ID not cached), also with SharedStorage (never cached).
func TestSmallFileCorruptHeader(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	for _, size := range []int{1, 4095, 4096, 4097, 5000} {
		for _, off := range []int64{0, 4096} {
			if off >= int64(size) {
				continue
			}
			for _, shared := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/off%d/shared=%v", size, off, shared), func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "f")
					w := openPath(t, NewTable(), ce, path, Options{})
					if _, err := w.WriteAt(bytes.Repeat([]byte{1}, size), 0); err != nil {
						t.Fatal(err)
					}
					w.Close()
					// Version 0 instead of 2.
					fh, err := os.OpenFile(path, os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := fh.WriteAt([]byte{0, 0}, 0); err != nil {
						t.Fatal(err)
					}
					fh.Close()
					r := openPath(t, NewTable(), ce, path, Options{SharedStorage: shared})
					defer r.Close()
					buf := make([]byte, 8192)
					n, err := r.ReadAt(buf, off)
					var cerr *CorruptError
					if !errors.Is(err, syscall.EIO) || !errors.As(err, &cerr) || !cerr.Header {
						t.Fatalf("ReadAt: n=%d err=%v, want a header CorruptError (EIO)", n, err)
					}
					if n != 0 {
						t.Errorf("ReadAt returned %d bytes with the error", n)
					}
				})
			}
		}
	}
}

// TestAllocsSmallFirstRead: the read that fetches header and data in one
// pread allocates nothing, like every other read of a few blocks.
// SharedStorage never caches the file ID, so every read from block 0
// takes that path.
func TestAllocsSmallFirstRead(t *testing.T) {
	if testing.Short() || testutil.RaceEnabled {
		t.Skip("measures allocations (not meaningful under -race)")
	}
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{SharedStorage: true})
	data := make([]byte, 5000)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	read := func() {
		if n, err := f.ReadAt(buf, 0); n != len(data) || err != io.EOF {
			t.Fatalf("ReadAt: %d %v", n, err)
		}
	}
	read()
	if n := testutil.MallocsPerRun(20, read); n > 0 {
		t.Errorf("first-block read with the header: %.1f allocations per call, want 0", n)
	}
}

package fusefrontend_reverse

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/testutil"
)

// openForRead builds a RootNode over a temp dir with one file of size
// bytes and returns a file handle on it, without mounting.
func openForRead(t testing.TB, size int) (*fileHandle, []byte) {
	t.Helper()
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, nt, ce := newCrypto(t, tv14Config())
	rn, err := NewRootNode(Args{PlainDir: dir}, nt, ce)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return newFileHandle(rn, fd, "f"), data
}

// TestReadAllocations: the read path allocates a constant number of small
// objects per request, independent of how many blocks it covers.
func TestReadAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful with -race")
	}
	f, _ := openForRead(t, 4<<20)
	allocs := func(n int) float64 {
		dest := make([]byte, n)
		f.readCipher(dest, 0) // warm the pools
		return testing.AllocsPerRun(20, func() {
			if _, err := f.readCipher(dest, 100); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(4096), allocs(1<<20)
	t.Logf("allocations per read: 4 KiB %.0f, 1 MiB %.0f", small, large)
	if large > 16 || large > small+16 {
		t.Errorf("1 MiB read allocates %.0f times (4 KiB: %.0f): per-block allocation?", large, small)
	}
}

// TestReadChunking: reads larger than one pooled buffer and reads at odd
// offsets return the same bytes as one whole-file read.
func TestReadChunking(t *testing.T) {
	f, data := openForRead(t, 3<<20+123)
	ce := f.rn.ce
	wantLen := int(ce.PlainSizeToCipherSize(uint64(len(data))))
	whole := make([]byte, wantLen+1000)
	n, err := f.readCipher(whole, 0)
	if err != nil || n != wantLen {
		t.Fatalf("whole read: %d bytes, %v; want %d", n, err, wantLen)
	}
	whole = whole[:n]
	cases := [][2]int{{0, 18}, {5, 3 << 20}, {contentenc.HeaderLen, 2 << 20}, {wantLen - 10, 100}, {wantLen, 10}, {1 << 20, 1}}
	for _, c := range cases {
		dest := make([]byte, c[1])
		n, err := f.readCipher(dest, uint64(c[0]))
		want := whole[min(c[0], len(whole)):min(c[0]+c[1], len(whole))]
		if err != nil || !bytes.Equal(dest[:n], want) {
			t.Errorf("read(%d, %d): %d bytes, %v", c[0], c[1], n, err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	for _, size := range []int{4096, 128 << 10, 1 << 20} {
		b.Run(byteSize(size), func(b *testing.B) {
			f, _ := openForRead(b, 8<<20)
			dest := make([]byte, size)
			b.SetBytes(int64(size))
			off := uint64(0)
			for b.Loop() {
				if _, err := f.readCipher(dest, off); err != nil {
					b.Fatal(err)
				}
				off = (off + uint64(size)) % (8 << 20)
			}
		})
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

package contentio

import (
	"testing"

	"gocryptfs/internal/benchutil"
	"gocryptfs/internal/cryptocore"
)

// BenchmarkAligned128K measures, per CPU second of the benchmarking thread
// (meaningful on a shared machine; run with -cpu 1 so that contentenc
// stays on that thread), block-aligned 128 KiB reads and writes: the
// kernel's usual FUSE request. Aligned requests need no read-modify-write
// and are decrypted into / encrypted from the caller's buffer directly.
func BenchmarkAligned128K(b *testing.B) {
	const size = 128 << 10
	for _, op := range []string{"ReadAt", "WriteAt"} {
		b.Run(op, func(b *testing.B) {
			f, _ := newFile(b, newCE(b, cryptocore.AESGCM), Options{NoPrealloc: true})
			data := make([]byte, size)
			for off := int64(0); off < 8*mib; off += size {
				if _, err := f.WriteAt(data, off); err != nil {
					b.Fatal(err)
				}
			}
			var off int64
			benchutil.LoopCPU(b, size, func() {
				var err error
				if op == "ReadAt" {
					_, err = f.ReadAt(data, off)
				} else {
					_, err = f.WriteAt(data, off)
				}
				if err != nil {
					b.Fatal(err)
				}
				off = (off + size) % (8 * mib)
			})
		})
	}
}

// TestAlignedDirectPaths: block-aligned reads decrypt into the caller's
// buffer and aligned writes encrypt from it; neither may touch memory
// beyond the request, and the results must match unaligned access.
func TestAlignedDirectPaths(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{})
	want := make([]byte, 5*bs/2)
	for i := range want {
		want[i] = byte(i * 7)
	}
	// Aligned whole-block write, then an aligned write of a tail that
	// extends the file.
	if _, err := f.WriteAt(want[:2*bs], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(want[2*bs:], 2*bs); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4*bs)
	for i := range buf {
		buf[i] = 0xee
	}
	n, err := f.ReadAt(buf[:3*bs], 0)
	if n != len(want) || err == nil {
		t.Fatalf("aligned read at EOF: %d, %v", n, err)
	}
	if string(buf[:n]) != string(want) {
		t.Fatal("aligned read returned wrong data")
	}
	for i, b := range buf[3*bs:] {
		if b != 0xee {
			t.Fatalf("byte %d beyond the request was overwritten", 3*bs+i)
		}
	}
	// An aligned write that ends inside the old last block must keep
	// the old bytes after it.
	if _, err := f.WriteAt([]byte("xy"), 2*bs); err != nil {
		t.Fatal(err)
	}
	copy(want[2*bs:], "xy")
	got := make([]byte, len(want))
	if n, _ := f.ReadAt(got, 1); n != len(want)-1 || string(got[:n]) != string(want[1:]) {
		t.Fatal("short aligned write lost the rest of its block")
	}
}

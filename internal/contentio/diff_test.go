//go:build linux

package contentio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/testutil"
)

// diffMaxSize bounds the plaintext size the random operations aim for, to
// keep the per-step full comparison cheap.
const diffMaxSize = 2 << 20

// differ applies the same operations to an encrypted File (two handles on
// the same inode, through a hard link) and to a plain os.File, and compares
// them after every step.
type differ struct {
	t     *testing.T
	rng   *rand.Rand
	ce    *contentenc.ContentEnc
	tbl   *Table
	paths [2]string
	files [2]*File
	ref   *os.File
	opts  Options
	step  int
	ops   map[string]int
}

func (d *differ) open() {
	for i, p := range d.paths {
		d.files[i] = openPath(d.t, d.tbl, d.ce, p, d.opts)
	}
}

func (d *differ) close() {
	for i, f := range d.files {
		if err := f.Close(); err != nil {
			d.t.Fatal(err)
		}
		d.files[i] = nil
	}
	if d.tbl.Len() != 0 {
		d.t.Fatalf("table keeps %d entries after closing all files", d.tbl.Len())
	}
}

func (d *differ) refSize() uint64 {
	fi, err := d.ref.Stat()
	if err != nil {
		d.t.Fatal(err)
	}
	return uint64(fi.Size())
}

func (d *differ) fail(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("step %d: %s", d.step, fmt.Sprintf(format, args...))
}

// randOff picks an offset: mostly near the data, sometimes far beyond EOF.
func (d *differ) randOff(size uint64) uint64 {
	switch r := d.rng.IntN(100); {
	case r < 55:
		return d.rng.Uint64N(size + 2*bs + 1)
	case r < 80: // around a block boundary
		b := d.rng.Uint64N(size/bs + 3)
		return max(0, b*bs+d.rng.Uint64N(5)) - min(b*bs, d.rng.Uint64N(3))
	default:
		return size + d.rng.Uint64N(300<<10)
	}
}

func (d *differ) randLen() int {
	switch r := d.rng.IntN(100); {
	case r < 45:
		return 1 + d.rng.IntN(200)
	case r < 80:
		return 1 + d.rng.IntN(3*bs)
	case r < 96:
		return 1 + d.rng.IntN(64<<10)
	default:
		return 1 + d.rng.IntN(1<<20+3*bs) // crosses the 257-block chunk limit
	}
}

func (d *differ) randData(n int) []byte {
	b := make([]byte, n)
	if d.rng.IntN(10) == 0 {
		return b // zeros: must not be mistaken for holes
	}
	for i := range b {
		b[i] = byte(d.rng.Uint32())
	}
	return b
}

func (d *differ) doStep() {
	size := d.refSize()
	f := d.files[d.rng.IntN(2)]
	r := d.rng.IntN(100)
	if size > diffMaxSize && r < 50 {
		r = 50 // shrink instead of growing further
	}
	switch {
	case r < 42:
		off := d.randOff(size)
		data := d.randData(d.randLen())
		d.ops["write"]++
		n, err := f.WriteAt(data, int64(off))
		if err != nil || n != len(data) {
			d.fail("WriteAt(%d bytes at %d) = %d, %v", len(data), off, n, err)
		}
		if _, err := d.ref.WriteAt(data, int64(off)); err != nil {
			d.t.Fatal(err)
		}
	case r < 50:
		data := d.randData(d.randLen() % 20000)
		d.ops["append"]++
		off, n, err := f.Append(context.Background(), data)
		if err != nil || n != len(data) || uint64(off) != size {
			d.fail("Append(%d) = %d, %d, %v; size %d", len(data), off, n, err, size)
		}
		if _, err := d.ref.WriteAt(data, int64(size)); err != nil {
			d.t.Fatal(err)
		}
	case r < 64:
		var n uint64
		switch q := d.rng.IntN(10); {
		case q == 0:
			n = 0
		case q < 5 && size > 0:
			n = d.rng.Uint64N(size)
		case q < 6:
			n = d.rng.Uint64N(size/bs+4) * bs
		default:
			n = size + d.rng.Uint64N(40<<10)
		}
		d.ops["truncate"]++
		if err := f.Truncate(context.Background(), n); err != nil {
			d.fail("Truncate(%d) from %d: %v", n, size, err)
		}
		if err := d.ref.Truncate(int64(n)); err != nil {
			d.t.Fatal(err)
		}
	case r < 80:
		off := d.rng.Uint64N(size + bs + 1)
		n := d.randLen()
		got := make([]byte, n)
		want := make([]byte, n)
		d.ops["read"]++
		gn, gerr := f.ReadAt(got, int64(off))
		wn, werr := d.ref.ReadAt(want, int64(off))
		if gn != wn || gerr != werr || !bytes.Equal(got[:gn], want[:wn]) {
			d.fail("ReadAt(%d, %d) = %d, %v; want %d, %v (size %d)", n, off, gn, gerr, wn, werr, size)
		}
	case r < 85:
		d.ops["reopen"]++
		d.close()
		d.open()
	case r < 90:
		off := d.rng.Uint64N(size + 3*bs)
		n := 1 + d.rng.Uint64N(3*bs)
		var mode uint32
		if d.rng.IntN(2) == 0 {
			mode = unix.FALLOC_FL_KEEP_SIZE
		}
		d.ops["fallocate"]++
		if err := f.Allocate(context.Background(), off, n, mode); err != nil {
			d.fail("Allocate(%d, %d, %d): %v", off, n, mode, err)
		}
		if err := unix.Fallocate(int(d.ref.Fd()), mode, int64(off), int64(n)); err != nil {
			d.t.Fatal(err)
		}
	case r < 96:
		d.ops["seek"]++
		d.checkSeek(f, size)
	default:
		d.ops["verify+fsync"]++
		if err := f.Verify(context.Background()); err != nil {
			d.fail("Verify: %v", err)
		}
		if err := f.Fsync(d.rng.IntN(2) == 0); err != nil {
			d.fail("Fsync: %v", err)
		}
	}
	d.compare()
}

// checkSeek checks that SeekData/SeekHole never hide data: everything
// between off and the data found is zero, and a reported hole starts a run
// of zeros.
func (d *differ) checkSeek(f *File, size uint64) {
	content := d.refContent()
	off := d.rng.Uint64N(size + 2)
	data, err := f.SeekData(context.Background(), off)
	switch {
	case off >= size:
		if !errors.Is(err, syscall.ENXIO) {
			d.fail("SeekData(%d) at EOF %d = %d, %v; want ENXIO", off, size, data, err)
		}
		return
	case errors.Is(err, syscall.ENXIO):
		data = size
	case err != nil:
		d.fail("SeekData(%d): %v", off, err)
	}
	if data < off || data > size || !allZero(content[off:data]) {
		d.fail("SeekData(%d) = %d hides data (size %d)", off, data, size)
	}
	hole, err := f.SeekHole(context.Background(), off)
	if err != nil || hole < off || hole > size {
		d.fail("SeekHole(%d) = %d, %v (size %d)", off, hole, err, size)
	}
	if hole == size {
		return
	}
	// Block-granular: a hole starts at a block boundary, or at off inside
	// a hole block.
	if hole != off && hole%bs != 0 {
		d.fail("SeekHole(%d) = %d is not block-aligned", off, hole)
	}
	if end := min(size, (hole/bs+1)*bs); !allZero(content[hole:end]) {
		d.fail("SeekHole(%d) = %d, but [%d, %d) holds data", off, hole, hole, end)
	}
	d.ops["seek hole found"]++
}

func (d *differ) refContent() []byte {
	b, err := os.ReadFile(d.ref.Name())
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

func (d *differ) compare() {
	d.t.Helper()
	want := d.refContent()
	for i, f := range d.files {
		size, err := f.Size(context.Background())
		if err != nil || size != uint64(len(want)) {
			d.fail("handle %d: Size = %d, %v; want %d", i, size, err, len(want))
		}
	}
	if cs := cipherSize(d.t, d.paths[0]); cs != d.ce.PlainSizeToCipherSize(uint64(len(want))) {
		d.fail("ciphertext size %d for plaintext size %d", cs, len(want))
	}
	got := make([]byte, len(want)+1)
	n, err := d.files[d.step%2].ReadAt(got, 0)
	if n != len(want) || err != io.EOF {
		d.fail("ReadAt(all) = %d, %v; want %d, EOF", n, err, len(want))
	}
	if !bytes.Equal(got[:n], want) {
		i := 0
		for i < n && got[i] == want[i] {
			i++
		}
		d.fail("content differs at byte %d (size %d)", i, len(want))
	}
}

// TestDifferential runs long random operation sequences against an
// encrypted file and a plain file and compares them after every step.
// CONTENTIO_DIFF_STEPS (default 300 per cipher and preallocation mode, 60
// with -short or -race) and CONTENTIO_DIFF_SEED make longer or different
// runs.
func TestDifferential(t *testing.T) {
	steps := envInt("CONTENTIO_DIFF_STEPS", 300)
	if testing.Short() || (testutil.RaceEnabled && os.Getenv("CONTENTIO_DIFF_STEPS") == "") {
		steps = 60
	}
	seed := uint64(envInt("CONTENTIO_DIFF_SEED", 1))
	for _, c := range allCiphers {
		for _, noPrealloc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/noprealloc=%v", c, noPrealloc), func(t *testing.T) {
				dir := t.TempDir()
				d := &differ{
					t:    t,
					rng:  rand.New(rand.NewPCG(seed, uint64(c)<<1|boolBit(noPrealloc))),
					ce:   newCE(t, c),
					tbl:  NewTable(),
					opts: Options{NoPrealloc: noPrealloc},
					ops:  map[string]int{},
				}
				d.paths = [2]string{filepath.Join(dir, "enc"), filepath.Join(dir, "link")}
				if err := os.WriteFile(d.paths[0], nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(d.paths[0], d.paths[1]); err != nil {
					t.Fatal(err)
				}
				ref, err := os.Create(filepath.Join(dir, "ref"))
				if err != nil {
					t.Fatal(err)
				}
				defer ref.Close()
				d.ref = ref
				d.open()
				defer d.close()
				for d.step = 0; d.step < steps; d.step++ {
					d.doStep()
				}
				t.Logf("seed %d: %d steps: %v", seed, steps, d.ops)
			})
		}
	}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

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
	"sync"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
)

// linkedPair creates an empty backing file and a hard link to it.
func linkedPair(t *testing.T) [2]string {
	t.Helper()
	dir := t.TempDir()
	p := [2]string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	if err := os.WriteFile(p[0], nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p[0], p[1]); err != nil {
		t.Fatal(err)
	}
	return p
}

func uniform(b []byte) bool {
	return len(b) == 0 || len(bytes.Trim(b, string(b[:1]))) == 0
}

// runAll runs fn(0..n-1) in parallel and reports the first error.
func runAll(t *testing.T, n int, fn func(g int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for g := range n {
		wg.Go(func() { errs[g] = fn(g) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFirstWrite lets several handles of one new, empty inode
// write at once, in ranges that share blocks: there must be one header and
// no lost update.
func TestConcurrentFirstWrite(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	const writers, span = 6, 5000
	for iter := range 10 {
		paths := linkedPair(t)
		tbl := NewTable()
		files := make([]*File, writers)
		for g := range files {
			files[g] = openPath(t, tbl, ce, paths[g%2], Options{})
		}
		runAll(t, writers, func(g int) error {
			_, err := files[g].WriteAt(bytes.Repeat([]byte{byte(g + 1)}, span), int64(g*span))
			return err
		})
		got := readAll(t, files[0])
		for g := range writers {
			if !bytes.Equal(got[g*span:(g+1)*span], bytes.Repeat([]byte{byte(g + 1)}, span)) {
				t.Fatalf("iteration %d: range of writer %d damaged", iter, g)
			}
		}
		for _, f := range files {
			f.Close()
		}
	}
}

// TestConcurrentSlots has writers rewriting their own small slots, many of
// which share a block, while readers check that every slot is always
// uniform (no torn write) and reads never fail.
func TestConcurrentSlots(t *testing.T) {
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c)
			paths := linkedPair(t)
			tbl := NewTable()
			a := openPath(t, tbl, ce, paths[0], Options{})
			defer a.Close()
			b := openPath(t, tbl, ce, paths[1], Options{})
			defer b.Close()
			handles := []*File{a, b}
			const slots, slotLen, rounds = 12, 1000, 40 // 12000 bytes: 3 blocks
			if _, err := a.WriteAt(bytes.Repeat([]byte{1}, slots*slotLen), 0); err != nil {
				t.Fatal(err)
			}
			const readers = 3
			runAll(t, slots+readers, func(g int) error {
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				if g < slots { // writer of slot g
					for r := range rounds {
						v := byte(2 + r%250)
						f := handles[rng.IntN(2)]
						if _, err := f.WriteAt(bytes.Repeat([]byte{v}, slotLen), int64(g*slotLen)); err != nil {
							return err
						}
					}
					return nil
				}
				buf := make([]byte, slots*slotLen)
				for range rounds {
					f := handles[rng.IntN(2)]
					n, err := f.ReadAt(buf, 0)
					if err != nil || n != len(buf) {
						return fmt.Errorf("reader: %d, %v", n, err)
					}
					for s := range slots {
						if !uniform(buf[s*slotLen : (s+1)*slotLen]) {
							return fmt.Errorf("slot %d torn", s)
						}
					}
				}
				return nil
			})
			got := readAll(t, a)
			last := byte(2 + (rounds-1)%250)
			if !bytes.Equal(got, bytes.Repeat([]byte{last}, slots*slotLen)) {
				t.Fatal("final content lost an update")
			}
		})
	}
}

// TestConcurrentBlocks mixes whole-block writers (each block uniform),
// truncation to block boundaries, appenders and readers that check that
// every block they see is uniform.
func TestConcurrentBlocks(t *testing.T) {
	ce := newCE(t, cryptocore.XChaCha20Poly1305)
	paths := linkedPair(t)
	tbl := NewTable()
	handles := []*File{
		openPath(t, tbl, ce, paths[0], Options{}),
		openPath(t, tbl, ce, paths[1], Options{}),
		openPath(t, tbl, ce, paths[0], Options{NoPrealloc: true}),
	}
	defer func() {
		for _, f := range handles {
			f.Close()
		}
	}()
	const maxBlocks, rounds = 48, 60
	roles := []string{"writer", "writer", "writer", "truncater", "appender", "reader", "reader", "reader"}
	runAll(t, len(roles), func(g int) error {
		rng := rand.New(rand.NewPCG(uint64(g), 11))
		buf := make([]byte, 16*bs)
		for range rounds {
			f := handles[rng.IntN(len(handles))]
			switch roles[g] {
			case "writer":
				first, n := rng.IntN(maxBlocks), 1+rng.IntN(8)
				for i := range n {
					v := byte(1 + rng.IntN(255))
					for j := i * bs; j < (i+1)*bs; j++ {
						buf[j] = v
					}
				}
				if _, err := f.WriteAt(buf[:n*bs], int64(first*bs)); err != nil {
					return err
				}
			case "truncater":
				if err := f.Truncate(context.Background(), uint64(rng.IntN(maxBlocks+8))*bs); err != nil {
					return err
				}
			case "appender":
				// Appends whole uniform blocks only while the size is block
				// aligned, which the other roles keep it.
				if _, _, err := f.Append(context.Background(), bytes.Repeat([]byte{byte(1 + rng.IntN(255))}, bs)); err != nil {
					return err
				}
			case "reader":
				off := rng.IntN(maxBlocks) * bs
				n, err := f.ReadAt(buf, int64(off))
				if err != nil && err != io.EOF {
					return fmt.Errorf("read at %d: %w", off, err)
				}
				for i := 0; i < n; i += bs {
					if !uniform(buf[i:min(n, i+bs)]) {
						return fmt.Errorf("torn block %d", (off+i)/bs)
					}
				}
			}
		}
		return nil
	})
	size, err := handles[0].Size(context.Background())
	if err != nil || size%bs != 0 {
		t.Fatalf("final size %d, %v", size, err)
	}
	got := readAll(t, handles[1])
	for i := 0; i < len(got); i += bs {
		if !uniform(got[i : i+bs]) {
			t.Fatalf("final block %d torn", i/bs)
		}
	}
	if err := handles[2].Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestTableSharing checks the table bookkeeping: one entry per inode,
// dropped after the last Close, and double Close reported.
func TestTableSharing(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	paths := linkedPair(t)
	other := filepath.Join(filepath.Dir(paths[0]), "other")
	tbl := NewTable()
	a := openPath(t, tbl, ce, paths[0], Options{})
	b := openPath(t, tbl, ce, paths[1], Options{})
	c := openPath(t, tbl, ce, other, Options{})
	if tbl.Len() != 2 {
		t.Fatalf("Len = %d, want 2", tbl.Len())
	}
	if a.e != b.e || a.e == c.e || a.Ino() != b.Ino() {
		t.Fatal("entries not shared by inode")
	}
	for _, f := range []*File{a, b, c} {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if tbl.Len() != 0 {
		t.Fatalf("Len = %d after closing, want 0", tbl.Len())
	}
	if err := a.Close(); err == nil {
		t.Fatal("double Close succeeded")
	}
	if _, err := Open(tbl, (*contentenc.ContentEnc)(nil), 0, Options{}); err == nil {
		t.Fatal("Open with nil ContentEnc succeeded")
	}
}

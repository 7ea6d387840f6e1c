package contentio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
)

// TestSharedStorageTwoTables stands for two mounts of one CIPHERDIR: two
// Tables (no shared in-process lock), each with its own opens of one
// backing file, write interleaved unaligned ranges that share blocks, into
// an empty file and then over it, while readers read. With SharedStorage
// the byte-range locks must keep every update and every read untorn.
func TestSharedStorageTwoTables(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	const size, maxPiece = 40 << 10, 200
	opts := Options{SharedStorage: true}
	path := linkedPair(t)[0]
	var files [2]*File
	for i := range files {
		files[i] = openPath(t, NewTable(), ce, path, opts)
	}
	for round := 1; round <= 2; round++ {
		r := rand.New(rand.NewPCG(uint64(round), 2))
		want := make([]byte, size)
		type piece struct{ off, n int }
		var mine [2][]piece
		for off, w := 0, 0; off < size; w ^= 1 {
			n := min(1+r.IntN(maxPiece), size-off)
			for i := range n {
				want[off+i] = byte(round*31 + off + i)
			}
			mine[w] = append(mine[w], piece{off, n})
			off += n
		}
		runAll(t, 3, func(g int) error {
			if g == 2 {
				// A reader: every block it reads must authenticate.
				buf := make([]byte, 3000)
				for i := range 200 {
					if _, err := files[i%2].ReadAt(buf, int64(i*997%size)); err != nil && !errors.Is(err, io.EOF) {
						return fmt.Errorf("read: %w", err)
					}
				}
				return nil
			}
			ps := mine[g]
			rand.New(rand.NewPCG(uint64(g), 9)).Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			for _, p := range ps {
				if _, err := files[g].WriteAt(want[p.off:p.off+p.n], int64(p.off)); err != nil {
					return fmt.Errorf("writer %d: %w", g, err)
				}
			}
			return nil
		})
		fresh := openPath(t, NewTable(), ce, path, Options{})
		got := readAll(t, fresh)
		fresh.Close()
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: %d bytes read, want %d; content differs", round, len(got), len(want))
		}
	}
}

// TestSharedStorageLockRegion: the internal locks lie at or beyond
// LockBase, and application lock ranges are clamped below it.
func TestSharedStorageLockRegion(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	f, path := newFile(t, ce, Options{SharedStorage: true})
	if _, err := f.WriteAt(make([]byte, 10000), 0); err != nil {
		t.Fatal(err)
	}
	// While a write holds its locks, another open file description sees
	// them at LockBase + ciphertext offset, nowhere below.
	other, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	h := f.writeLock(100, 10)
	probe := func(start, n int64) int16 {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: start, Len: n}
		if err := unix.FcntlFlock(uintptr(other), unix.F_OFD_GETLK, &lk); err != nil {
			t.Fatal(err)
		}
		return lk.Type
	}
	if probe(0, LockBase) != unix.F_UNLCK {
		t.Error("internal lock below LockBase")
	}
	if probe(LockBase, 0) == unix.F_UNLCK {
		t.Error("no internal lock at LockBase")
	}
	f.release(h)
	if probe(0, 0) != unix.F_UNLCK {
		t.Error("lock left after unlock")
	}
	for _, c := range []struct{ start, n, want int64 }{{0, 0, LockBase}, {10, 0, LockBase - 10}, {5, 7, 7}, {LockBase - 1, 100, 1}} {
		if got, err := ClampAppLock(c.start, c.n); err != nil || got != c.want {
			t.Errorf("ClampAppLock(%d, %d) = %d, %v; want %d", c.start, c.n, got, err, c.want)
		}
		if c.n == 0 && UnclampAppLock(c.start, c.want) != 0 {
			t.Errorf("UnclampAppLock(%d, %d) != 0", c.start, c.want)
		}
	}
	if _, err := ClampAppLock(LockBase, 1); err == nil {
		t.Error("a lock at LockBase accepted")
	}
}

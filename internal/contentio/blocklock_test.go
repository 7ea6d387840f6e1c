package contentio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"gocryptfs/internal/cryptocore"
)

// TestRangeLockDisjoint takes disjoint exclusive ranges and overlapping
// shared ones from one goroutine: if any of them waited for another, the
// test would hang (and fail by timeout).
func TestRangeLockDisjoint(t *testing.T) {
	var l rangeLock
	a := l.lock(blockRange{first: 0, last: 3, excl: true})
	b := l.lock(blockRange{first: 4, last: 4, excl: true})
	c := l.lock(blockRange{first: 5, last: 9})
	d := l.lock(blockRange{first: 7, last: 20})
	if a == b || b == c || c == d {
		t.Fatalf("slots shared: %d %d %d %d", a, b, c, d)
	}
	for _, s := range []int{a, b, c, d} {
		l.unlock(s)
	}
	// All released: the whole range can be taken exclusively.
	l.unlock(l.lock(blockRange{first: 0, last: 1<<64 - 1, excl: true}))
	if !(blockRange{first: 3, last: 5}).conflicts(blockRange{first: 5, last: 6, excl: true}) ||
		(blockRange{first: 3, last: 5}).conflicts(blockRange{first: 5, last: 6}) ||
		(blockRange{first: 3, last: 5, excl: true}).conflicts(blockRange{first: 6, last: 6, excl: true}) {
		t.Fatal("conflicts is wrong")
	}
}

// TestParallelWritersSharedBlocks splits a file into segments of random,
// unaligned lengths, each owned by one of several writers, so that most
// 4 KiB blocks hold bytes of two or more writers. The writers rewrite
// random pieces of their own segments at once (read-modify-write of shared
// blocks in parallel), one of them also writes past the end of file
// (extending it, which takes the whole file), while readers read random
// ranges, which must never fail (a torn block would not authenticate).
// Afterwards the file must hold exactly every writer's last bytes: a lost
// update of a shared block shows as a mismatch.
func TestParallelWritersSharedBlocks(t *testing.T) {
	const (
		writers = 6
		readers = 2
		initial = 40*bs + 123 // plaintext size before the writers start
		tail    = 6 * bs      // region past the end, written by writer 0
		steps   = 300
	)
	ce := newCE(t, cryptocore.AESGCM)
	for iter := range 3 {
		rng := rand.New(rand.NewPCG(uint64(iter), 10))
		f, _ := newFile(t, ce, Options{})
		want := make([]byte, initial+tail)
		for i := range initial {
			want[i] = byte(rng.Uint32())
		}
		if _, err := f.WriteAt(want[:initial], 0); err != nil {
			t.Fatal(err)
		}
		// Segments [start, end) of random lengths, owned by random
		// writers; writer 0 also owns the tail past the end of file.
		type segment struct{ start, end int }
		owned := make([][]segment, writers)
		for pos := 0; pos < initial; {
			n := min(1+rng.IntN(9000), initial-pos)
			w := rng.IntN(writers)
			owned[w] = append(owned[w], segment{pos, pos + n})
			pos += n
		}
		owned[0] = append(owned[0], segment{initial, initial + tail})
		seeds := make([]uint64, writers+readers)
		for i := range seeds {
			seeds[i] = rng.Uint64()
		}
		maxEnd := make([]int, writers)
		runAll(t, writers+readers, func(g int) error {
			r := rand.New(rand.NewPCG(seeds[g], uint64(g)))
			if g >= writers {
				buf := make([]byte, 3*bs)
				for range steps {
					n := 1 + r.IntN(len(buf))
					off := r.IntN(initial + tail)
					if _, err := f.ReadAt(buf[:n], int64(off)); err != nil && !errors.Is(err, io.EOF) {
						return fmt.Errorf("reader %d at %d+%d: %w", g, off, n, err)
					}
				}
				return nil
			}
			if len(owned[g]) == 0 {
				return nil
			}
			for range steps {
				s := owned[g][r.IntN(len(owned[g]))]
				a := s.start + r.IntN(s.end-s.start)
				b := a + 1 + r.IntN(s.end-a)
				// Only this writer owns want[a:b], so it may fill it
				// without a lock; the others read it after runAll.
				for i := a; i < b; i++ {
					want[i] = byte(r.Uint32())
				}
				if _, err := f.WriteAt(want[a:b], int64(a)); err != nil {
					return fmt.Errorf("writer %d at %d+%d: %w", g, a, b-a, err)
				}
				maxEnd[g] = max(maxEnd[g], b)
			}
			return nil
		})
		size := max(initial, maxEnd[0])
		got := readAll(t, f)
		if len(got) != size {
			t.Fatalf("iteration %d: size %d, want %d", iter, len(got), size)
		}
		if !bytes.Equal(got, want[:size]) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("iteration %d: first wrong byte at %d (block %d)", iter, i, i/bs)
				}
			}
		}
	}
}

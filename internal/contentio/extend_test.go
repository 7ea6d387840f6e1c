package contentio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gocryptfs/internal/cryptocore"
)

// TestParallelExtendingWrites lets goroutines write disjoint regions of a
// file past its end at once, in random order, with unaligned starts, ends
// and gaps, and compares the result with a plain-file model: the data
// where written, zeros in the gaps, the largest end as the size, every
// block authenticating. Run it with -race too.
func TestParallelExtendingWrites(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	for round := range envInt("CONTENTIO_EXTEND_ROUNDS", 40) {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(round), 10))
			f, _ := newFile(t, ce, Options{NoPrealloc: round%2 == 1})
			// An existing start, sometimes ending inside a block.
			start := uint64(rng.IntN(3*bs) + 1)
			model := pattern(int(start), byte(round))
			if _, err := f.WriteAt(model, 0); err != nil {
				t.Fatal(err)
			}
			// Regions: some block-aligned (what the kernel's write-back
			// sends), some not; each goroutine writes its region in
			// pieces, in order, the goroutines in random order.
			type piece struct {
				off  uint64
				data []byte
			}
			const writers = 4
			work := make([][]piece, writers)
			pos := start
			if round%3 == 0 {
				pos = (pos + bs - 1) / bs * bs
			}
			var end uint64
			for g := range writers {
				gap := uint64(rng.IntN(2 * bs))
				if round%3 == 0 {
					gap = gap / bs * bs
				}
				pos += gap
				n := uint64(rng.IntN(6*bs) + 1)
				if round%3 == 0 {
					n = (n + bs - 1) / bs * bs
				}
				data := pattern(int(n), byte(16*round+g+1))
				for o := uint64(0); o < n; {
					k := min(n-o, uint64(rng.IntN(3*bs)+1))
					work[g] = append(work[g], piece{pos + o, data[o : o+k]})
					o += k
				}
				end = pos + n
				if uint64(len(model)) < end {
					model = append(model, make([]byte, end-uint64(len(model)))...)
				}
				copy(model[pos:], data)
				pos = end
			}
			rng.Shuffle(writers, func(i, j int) { work[i], work[j] = work[j], work[i] })
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for g := range writers {
				wg.Go(func() {
					for _, p := range work[g] {
						if _, err := f.WriteAt(p.data, int64(p.off)); err != nil {
							errs[g] = err
							return
						}
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if err := f.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, f)
			if !bytes.Equal(got, model) {
				t.Fatalf("content differs from the model (size %d, want %d)", len(got), len(model))
			}
		})
	}
}

// TestReadDuringExtendingWrites reads a growing file while writers extend
// it in parallel: no read may fail authentication (a partial block must
// never be followed by a written one).
func TestReadDuringExtendingWrites(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{NoPrealloc: true})
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	const writers, per = 4, 40
	var wg sync.WaitGroup
	errs := make([]error, writers+1)
	stop, stopped := make(chan struct{}), make(chan struct{})
	for g := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range per {
				// Unaligned pieces at interleaved offsets.
				off := uint64((i*writers+g)*bs + rng.IntN(bs))
				if _, err := f.WriteAt(pattern(rng.IntN(bs)+1, byte(g)), int64(off)); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	go func() {
		defer close(stopped)
		buf := make([]byte, 64*bs)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
				errs[writers] = err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-stopped
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFailedExtenderSize: a writer past the end of file that fails must
// not change the size, also when another writer filled a gap below it
// meanwhile. The second writer wrote its end block with the logical size
// of that moment, which included the failed writer's reservation, so it
// wrote it full: without settle the file ended 4096-aligned, up to 4095
// zero bytes past the end of any successful write (here 45056 instead of
// 41460). The failure is taken right after writeLock (writeLocked failing
// before its first pwrite: a header read error); an append that fails
// with ENOSPC is cut back by the last writer (dropFresh, leave) to the
// same end.
func TestFailedExtenderSize(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{NoPrealloc: true})
	if _, err := f.WriteAt(pattern(10*bs, 1), 0); err != nil {
		t.Fatal(err)
	}
	// W1 reserves block 12, past the end, and fails before it writes.
	h1, err := f.writeLock(context.Background(), 12*bs, 100)
	if err != nil {
		t.Fatal(err)
	}
	if h1.ext == 0 {
		t.Fatal("W1 got no reservation")
	}
	// Meanwhile W2 writes 500 bytes into block 10 and succeeds.
	if _, err := f.WriteAt(pattern(500, 2), 10*bs); err != nil {
		t.Fatal(err)
	}
	f.endWrite(h1, false)
	size, err := f.Size(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(10*bs + 500); size != want {
		t.Fatalf("size %d after a failed write past the end, want %d (the end of the successful write)", size, want)
	}
	got := make([]byte, 11*bs)
	n, err := f.ReadAt(got, 0)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	want := append(pattern(10*bs, 1), pattern(500, 2)...)
	if !bytes.Equal(got[:n], want) {
		t.Error("content after the cut differs from what the successful writes wrote")
	}
}

// failedExtenderPending sets up TestFailedExtenderSize's file up to the
// moment the failed writer W1 ends: W1 holds its reservation of block 12,
// W2 has written 500 bytes into block 10 (and wrote that block full).
func failedExtenderPending(t *testing.T) (*File, held) {
	t.Helper()
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{NoPrealloc: true})
	if _, err := f.WriteAt(pattern(10*bs, 1), 0); err != nil {
		t.Fatal(err)
	}
	h1, err := f.writeLock(context.Background(), 12*bs, 100)
	if err != nil || h1.ext == 0 {
		t.Fatal("W1 got no reservation", err)
	}
	if _, err := f.WriteAt(pattern(500, 2), 10*bs); err != nil {
		t.Fatal(err)
	}
	return f, h1
}

// TestCutBeforeQueuedTruncate: a truncate that waits for the writers when
// the failed one ends (the writeback cache's lostWrite does that) starts
// from the cut size and keeps its own: the cut is made by whoever holds
// the file exclusively first, never after a later size change. (If the
// truncate only gets there after the writer ended, the test checks the
// same outcome without the race.)
func TestCutBeforeQueuedTruncate(t *testing.T) {
	f, h1 := failedExtenderPending(t)
	done := make(chan error)
	go func() { done <- f.Truncate(context.Background(), 20*bs) }()
	time.Sleep(100 * time.Millisecond) // the truncate waits for the content lock
	f.endWrite(h1, false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if size, _ := f.Size(context.Background()); size != 20*bs {
		t.Fatalf("truncate to %d succeeded, size now %d", 20*bs, size)
	}
	got := make([]byte, 20*bs)
	if _, err := f.ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	want := append(append(pattern(10*bs, 1), pattern(500, 2)...), make([]byte, 10*bs-500)...)
	if !bytes.Equal(got, want) {
		t.Error("content after the cut and the truncate differs")
	}
}

// TestCutBeforeQueuedAppend: an append queued behind the writers when
// the failed one ends writes at the end of the data, and keeps it.
func TestCutBeforeQueuedAppend(t *testing.T) {
	f, h1 := failedExtenderPending(t)
	done := make(chan error)
	go func() {
		_, _, err := f.Append(context.Background(), pattern(1000, 3))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the append waits for the content lock
	f.endWrite(h1, false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := append(append(pattern(10*bs, 1), pattern(500, 2)...), pattern(1000, 3)...)
	if size, _ := f.Size(context.Background()); size != uint64(len(want)) {
		t.Fatalf("size %d after the append, want %d", size, len(want))
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("content after the cut and the append differs")
	}
}

// TestCutWithoutWaiter: with nobody waiting, the next writer does not
// reserve while the cut is pending; endWrite's settle makes it.
func TestCutWithoutWaiter(t *testing.T) {
	f, h1 := failedExtenderPending(t)
	x := &f.e.ext
	if !f.leave(h1.ext, false) {
		t.Fatal("the last writer after a failure was not told to cut")
	}
	f.release(h1)
	if _, ok := f.reserve(0, 10); ok {
		t.Error("a writer reserved while a cut was pending")
	}
	f.settle(true)
	x.mu.Lock()
	pending := x.pendingCut
	x.mu.Unlock()
	if size, _ := f.Size(context.Background()); pending != 0 || size != 10*bs+500 {
		t.Errorf("after settle: pending %d, size %d; want 0, %d", pending, size, 10*bs+500)
	}
}

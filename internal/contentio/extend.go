package contentio

import (
	"sync"
	"sync/atomic"

	"gocryptfs/internal/contentenc"
)

// Writers past the end of file run in parallel (without SharedStorage):
// several processes (or the kernel's write-back of several regions) filling
// disjoint regions of a file that grows do not wait for each other. They
// hold the content lock shared and their blocks in the range lock, like
// writes inside the file, and agree on the file size through an extension
// record in the inode's entry:
//
//   - each one reserves its range on entry: the logical size is the largest
//     end reserved (or the backing file's size when nobody is writing), and
//     every block before the one holding it must end up a full block;
//   - when it writes (holding its blocks), a writer takes the logical size
//     of that moment as the old size: a block below the logical end block
//     is written full, the bytes that are neither its data nor already on
//     disk reading as zeros, and the logical end block as long as the size
//     says. Whoever writes a block last leaves it right, in whatever order
//     the writers get their blocks; a block that another reserved writer
//     still has to write reads as zeros (a hole) until then, as on a local
//     filesystem;
//   - the old end block may hold a partial block. A writer that starts
//     after it would have to pad it while its owner may still be writing
//     it, so such writers (rare: writes that follow an unaligned end with a
//     gap) take the file exclusively as before. A writer that covers it
//     and grows the file leaves it full; until then it is "unsettled", and
//     writers starting after it take the file exclusively too, since
//     writing beyond it would make a partial block a middle block, which
//     does not authenticate as a full one.
//
// A writer that fails after others reserved space behind it leaves zeros
// where its data would have gone, below their end: the size is the largest
// end reserved, as if it had written zeros. When the writer with the
// largest end fails, the others have written their end blocks for a size
// that is not reached: the last writer to leave then cuts the file back to
// the end of the data actually written (settle; docs/internals.md, section
// 10.1).
//
// docs/internals.md (section 4) walks through a concurrent write beyond
// the end of file with these fields and places them in the lock order.
type extension struct {
	mu sync.Mutex
	// active counts the reserved writers. While it is 0, size is stale and
	// the next writer takes the backing file's size.
	active int
	// size is the logical plaintext size: read without mu by writers that
	// hold their blocks, raised under mu.
	size atomic.Uint64
	// unsettled is 1 + the number of a partial block that is no longer the
	// end block and that the writer with token settler rewrites full; 0:
	// none.
	unsettled uint64
	settler   uint64
	// tokens numbers the reservations.
	tokens uint64
	// startCS is the ciphertext size when the first writer came, and
	// okEnd the largest ciphertext end of the successful pwrites since
	// (kept up outside reservations too, and reset by the first writer):
	// where the blocks of a new append start (freshBlocks).
	startCS uint64
	okEnd   atomic.Uint64
	// startPS is the plaintext size when the first writer came, okData
	// the largest plaintext end of the data of the successful writes
	// since (reserved or not), and lost is set when a reserved writer
	// failed: the size the reservations promised may not be reached.
	startPS uint64
	okData  atomic.Uint64
	lost    bool
	// pendingCut is 1 + the plaintext size the file must be cut back to
	// after a failed reserved writer (settle), 0: none. While it is set,
	// no writer reserves: each takes the file exclusively, and whoever
	// holds it exclusively first makes the cut (applyCut).
	pendingCut uint64
}

// wroteData records a successful write of plaintext data ending at end.
func (x *extension) wroteData(end uint64) {
	for {
		old := x.okData.Load()
		if end <= old || x.okData.CompareAndSwap(old, end) {
			return
		}
	}
}

// written records a successful pwrite ending at ciphertext offset end.
func (x *extension) written(end uint64) {
	for {
		old := x.okEnd.Load()
		if end <= old || x.okEnd.CompareAndSwap(old, end) {
			return
		}
	}
}

// reserve registers a writer of the plaintext range [off, end), end > off,
// that holds the content lock shared. It returns the writer's token, or
// ok=false if the writer must take the file exclusively instead (see
// above; also when the file has no header yet, or a size check fails).
func (f *File) reserve(off, end uint64) (tok uint64, ok bool) {
	x := &f.e.ext
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.active == 0 && x.pendingCut != 0 {
		return 0, false
	}
	if x.active == 0 {
		// Sampled under mu: a writer that left just now may have grown
		// the file.
		cs, err := fstatSize(f.fd)
		if err != nil || cs <= contentenc.HeaderLen {
			return 0, false
		}
		x.size.Store(f.ce.CipherSizeToPlainSize(cs))
		x.unsettled = 0
		x.startCS = cs
		x.okEnd.Store(0)
		x.startPS = x.size.Load()
		x.okData.Store(0)
		x.lost = false
	}
	s := x.size.Load()
	first := off / bs
	if x.unsettled != 0 && first >= x.unsettled {
		return 0, false
	}
	newUnsettled := false
	if s%bs != 0 {
		tail := s / bs
		if first > tail {
			return 0, false
		}
		if end >= (tail+1)*bs {
			// The partial end block becomes a middle block.
			if x.unsettled != 0 {
				return 0, false
			}
			newUnsettled = true
		}
	}
	x.tokens++
	tok = x.tokens
	if newUnsettled {
		x.unsettled, x.settler = s/bs+1, tok
	}
	if end > s {
		x.size.Store(end)
	}
	x.active++
	return tok, true
}

// leave ends the reservation tok after its write. A settler that failed
// may have left its block partial, so it stays unsettled until the writers
// have drained and the next one looks at the backing file again.
//
// If a reserved writer failed (also an append cut short by a full disk,
// dropFresh), the last one to leave records the plaintext size the file
// must have (the end of what was there before and of the data written
// since) as pendingCut and reports true: the writer then calls settle
// once it has released its locks.
func (f *File) leave(tok uint64, ok bool) (cut bool) {
	x := &f.e.ext
	x.mu.Lock()
	x.active--
	if ok && x.settler == tok {
		x.unsettled, x.settler = 0, 0
	}
	if !ok {
		x.lost = true
	}
	if x.active == 0 && x.lost {
		x.lost = false
		x.pendingCut = 1 + max(x.startPS, x.okData.Load())
		cut = true
	}
	x.mu.Unlock()
	return cut
}

// settle makes the cut that leave recorded, if nobody holding the file
// exclusively made it in between (applyCut).
func (f *File) settle(cut bool) {
	if !cut {
		return
	}
	f.e.content.Lock()
	f.applyCut()
	f.e.content.Unlock()
}

// applyCut cuts the file back to pendingCut, with the content lock held
// exclusively, after a reserved writer with the largest end failed: the
// other writers wrote their end blocks full, for the size of the
// reservations, which leaves up to a block of zeros after the end of the
// data written. Every holder of the content lock in exclusive mode calls
// it first, so that a truncate, append or fallocate queued behind the
// writers starts from the right size, and no write can come in between
// (reserve refuses while a cut is pending). A failure is logged: the
// writes' own results stand.
func (f *File) applyCut() {
	x := &f.e.ext
	x.mu.Lock()
	c := x.pendingCut
	x.pendingCut = 0
	x.mu.Unlock()
	if c == 0 {
		return
	}
	size := c - 1
	_, ps, err := f.sizes()
	if err == nil && ps > size {
		err = f.shrink(size)
	}
	if err != nil {
		f.log.Warn("could not cut a file back to its data after a failed write", "ino", f.ino, "size", size, "err", err)
	}
}

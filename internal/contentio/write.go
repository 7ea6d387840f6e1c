package contentio

// Locking: which locks this file takes, in which order and mode, is
// described in docs/internals.md (sections 2 to 5).

import (
	"context"
	"errors"
	"syscall"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// zeroBlock is a read-only source of zero bytes for padding and for the
// one-byte writes of truncate. It is never written to.
var zeroBlock [bs]byte

// WriteAt writes data at plaintext offset off, implementing io.WriterAt,
// with the reference's semantics (docs/format.md 4.7):
//
//   - the first write into an empty backing file (or one holding only a
//     header, or a truncated header of 1..17 bytes) writes a fresh random
//     header first;
//   - partial first and last blocks are read, decrypted, merged and
//     re-encrypted whole with a fresh nonce; a block's new length is
//     max(old length, end of the write within it);
//   - a write that starts in a block after the one holding the current end
//     of file first pads that block with zeros to 4096 bytes; the blocks in
//     between stay backing-file holes;
//   - unless Options.NoPrealloc, the ciphertext range of blocks that hold
//     data is reserved with fallocate(FALLOC_FL_KEEP_SIZE) first, so that a
//     full disk fails the write (ENOSPC) before any of them is touched;
//     blocks appended past the end of the backing file are not: on ENOSPC
//     they are punched out and cut off again (dropFresh);
//   - all ciphertext blocks of a chunk (up to 257 blocks, so a whole 1 MiB
//     request) go out with one pwrite.
//
// On error it returns the number of bytes of data completely written
// before the failing chunk. A failure in the middle of a pwrite can leave
// only the blocks of that chunk unreadable, never other blocks. Writes to
// disjoint blocks run in parallel, also past the end of file (extend.go);
// writes sharing a block are serialized, and so are the rare writes that
// create the header or must pad a block they do not cover (see the package
// comment). O_APPEND is the caller's business: use Append.
func (f *File) WriteAt(data []byte, off int64) (int, error) {
	return f.WriteAtContext(context.Background(), data, off)
}

// WriteAtContext is WriteAt on behalf of a request with context ctx: with
// SharedStorage, waiting for byte-range locks that others hold ends with
// an error wrapping EINTR when ctx is cancelled, before anything is
// written (see Options.lockTimeout).
func (f *File) WriteAtContext(ctx context.Context, data []byte, off int64) (int, error) {
	if err := f.checkRange(off, len(data)); err != nil {
		return 0, err
	}
	if len(data) == 0 {
		return 0, nil
	}
	h, err := f.writeLock(ctx, uint64(off), uint64(len(data)))
	if err != nil {
		return 0, err
	}
	n, err := f.writeLocked(data, uint64(off), h)
	if n > 0 {
		f.e.ext.wroteData(uint64(off) + uint64(n))
	}
	f.endWrite(h, err == nil)
	return n, err
}

// endWrite releases the locks of a write that held h and succeeded if ok:
// it ends the writer's reservation, if any, and settles the size when it
// was the last one after a failed reserved writer (extend.go).
func (f *File) endWrite(h held, ok bool) {
	cut := false
	if h.ext != 0 {
		cut = f.leave(h.ext, ok)
	}
	f.release(h)
	f.settle(cut)
}

// Append writes data at the current end of file, atomically with respect
// to all other operations on the inode, for files opened with O_APPEND. It
// returns the offset at which data was written and the number of bytes
// written. ctx ends a wait for locks as in WriteAtContext.
func (f *File) Append(ctx context.Context, data []byte) (off int64, n int, err error) {
	h, err := f.exclusiveLock(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer f.release(h)
	_, ps, err := f.sizes()
	if err != nil {
		return 0, 0, err
	}
	if ps > f.maxPlain {
		return 0, 0, opError("append", syscall.EFBIG)
	}
	if err := f.checkRange(int64(ps), len(data)); err != nil {
		return int64(ps), 0, err
	}
	n, err = f.writeLocked(data, ps, held{})
	return int64(ps), n, err
}

// writeLocked is WriteAt with the locks of writeLock (or the content lock
// held exclusively) in h.
func (f *File) writeLocked(data []byte, off uint64, h held) (int, error) {
	var id [contentenc.FileIDLen]byte
	if h.ext != 0 {
		var err error
		if id, err = f.fileID(true); err != nil {
			return 0, err
		}
	}
	done := 0
	for done < len(data) {
		pos := off + uint64(done)
		limit := (pos/bs + chunkBlocks) * bs
		n := int(min(uint64(len(data)-done), limit-pos))
		var err error
		if h.ext != 0 {
			// The logical size of this moment (extend.go); the file
			// has a header, and the size is at least the end of data.
			err = f.mergeChunk(data[done:done+n], pos, f.e.ext.size.Load(), id, writeReserved)
		} else {
			err = f.writeChunk(data[done:done+n], pos)
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// writeChunk writes data (non-empty, touching at most chunkBlocks blocks)
// at off, with the content lock held exclusively: it creates the header of
// an empty file and pads the old last block, as needed.
func (f *File) writeChunk(data []byte, off uint64) error {
	cs, ps, err := f.sizes()
	if err != nil {
		return err
	}
	var id [contentenc.FileIDLen]byte
	newHeader := cs <= contentenc.HeaderLen
	if newHeader {
		// Empty, header-only or truncated-header file: its contents are
		// all gone, so a fresh file ID is as good as the old one and
		// avoids trusting a header that may be damaged.
		id = contentenc.RandomHeader(nil).ID
		ps = 0
	} else if id, err = f.fileID(true); err != nil {
		return err
	}

	first := off / bs
	if ps%bs != 0 && first > ps/bs {
		// Writing past the block that holds the end of file: pad that
		// block to full length. Reserve the space of the write itself
		// first, so that a full disk fails it before the padding changes
		// the file. The recursive call stays within one block, so it does
		// not come back here.
		nb := (off+uint64(len(data))-1)/bs - first + 1
		if err := f.prealloc(f.ce.BlockNoToCipherOff(first), nb*f.cbs); err != nil {
			return err
		}
		if err := f.writeChunk(zeroBlock[:bs-ps%bs], ps); err != nil {
			return err
		}
		ps += bs - ps%bs
	}
	kind := writeExclusive
	if newHeader {
		kind = writeNewFile
	}
	return f.mergeChunk(data, off, max(ps, off+uint64(len(data))), id, kind)
}

// mergeChunk writes data (non-empty, at most chunkBlocks blocks) at off
// into a file whose plaintext size is ps once the write is done (ps >= off
// + len(data); the block holding the old end of file is full or among the
// blocks written). The bytes of the touched blocks below ps that data does
// not cover keep their old contents; those not on disk (holes, or beyond
// the backing file's end while another writer's reservation makes the
// file this long) are written as zeros.
func (f *File) mergeChunk(data []byte, off, ps uint64, id [contentenc.FileIDLen]byte, kind writeKind) error {
	newHeader := kind == writeNewFile
	first := off / bs
	end := off + uint64(len(data))
	last := (end - 1) / bs
	nb := last - first + 1
	head := off - first*bs // plaintext before data in the first block

	cbuf := f.ce.GetCBuf()
	defer f.ce.PutCBuf(cbuf)
	lastLen := oldLen(ps, last)
	// Old bytes are needed before data in the first block and after it in
	// the last one; a new file has none.
	readLast := !newHeader && lastLen > end-last*bs && (nb > 1 || head == 0)
	if head == 0 && !readLast {
		// Whole blocks, or a tail that ends at the end of file: nothing
		// old to merge, so encrypt data itself without copying it first.
		return f.writeBlocks(data, first, id, kind, *cbuf)
	}

	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	plain := (*pbuf)[:nb*bs]
	if head > 0 {
		// The whole first block, so that a write ending in it keeps the
		// bytes after data too.
		if newHeader {
			clear(plain[:head])
		} else if err := f.readBlockPadded(plain[:0], first, oldLen(ps, first), id, *cbuf); err != nil {
			return err
		}
	}
	if readLast {
		if err := f.readBlockPadded(plain[:(nb-1)*bs], last, lastLen, id, *cbuf); err != nil {
			return err
		}
	}
	copy(plain[head:], data)
	return f.writeBlocks(plain[:(nb-1)*bs+lastLen], first, id, kind, *cbuf)
}

// readBlockPadded reads block blockNo, whose plaintext is want bytes long
// in the file being written, into the spare capacity of dst, and fills
// what the disk does not hold up to want with zeros.
func (f *File) readBlockPadded(dst []byte, blockNo, want uint64, id [contentenc.FileIDLen]byte, scratch []byte) error {
	old, err := f.readBlock(dst, blockNo, id, scratch)
	if err != nil {
		return err
	}
	if got := uint64(len(old) - len(dst)); got < want {
		clear(old[len(old) : len(dst)+int(want)])
	}
	return nil
}

// oldLen returns how many plaintext bytes block blockNo holds in a file of
// plaintext size ps.
func oldLen(ps, blockNo uint64) uint64 {
	start := blockNo * bs
	if start >= ps {
		return 0
	}
	return min(bs, ps-start)
}

// readBlock reads and decrypts block blockNo, appending the plaintext to
// dst (whose spare capacity must hold a block). scratch (capacity at least
// one ciphertext block) receives the ciphertext. A block beyond the end of
// the file appends nothing.
func (f *File) readBlock(dst []byte, blockNo uint64, id [contentenc.FileIDLen]byte, scratch []byte) ([]byte, error) {
	c := scratch[:f.cbs]
	m, err := syscallcompat.PreadFull(f.fd, c, int64(f.ce.BlockNoToCipherOff(blockNo)))
	if err != nil {
		return dst, opError("pread", err)
	}
	out, err := f.ce.DecryptBlock(dst, c[:m], blockNo, id[:])
	if err != nil {
		return dst, f.corrupt(err, true)
	}
	return out, nil
}

// writeBlocks encrypts plain as blocks first, first+1, ... of file id and
// writes them, preceded by the header for writeNewFile. scratch is a
// pooled ciphertext buffer (capacity for a header and chunkBlocks blocks);
// the header goes to its first HeaderLen bytes so that header and block 0
// of a new file go out with a single pwrite.
func (f *File) writeBlocks(plain []byte, first uint64, id [contentenc.FileIDLen]byte, kind writeKind, scratch []byte) error {
	const hl = contentenc.HeaderLen
	c := f.ce.EncryptBlocks(scratch[:hl], plain, first, id[:])
	cOff := f.ce.BlockNoToCipherOff(first)
	cs, fresh := f.freshBlocks(cOff, kind)
	if !fresh {
		if err := f.prealloc(cOff, uint64(len(c)-hl)); err != nil {
			return err
		}
	}
	out, outOff := c[hl:], cOff
	if kind == writeNewFile {
		contentenc.FileHeader{Version: contentenc.CurrentVersion, ID: id}.AppendTo(c[:0])
		if first == 0 {
			out, outOff = c, 0
		} else if err := syscallcompat.PwriteFull(f.fd, c[:hl], 0); err != nil {
			return opError("pwrite header", err)
		}
	}
	if err := syscallcompat.PwriteFull(f.fd, out, int64(outOff)); err != nil {
		if fresh && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
			f.dropFresh(cs, outOff, uint64(len(out)))
		}
		return opError("pwrite", err)
	}
	if kind == writeNewFile {
		// Cached once the header is on disk (table.go: the cache may
		// be emptied at any time, and is then read back from there).
		f.e.setID(id, true)
	}
	f.e.ext.written(outOff + uint64(len(out)))
	return nil
}

// freshBlocks reports whether the blocks starting at ciphertext offset
// cOff lie past the end of the backing file, and its size, so that a full
// disk can be cleaned up after (dropFresh) instead of being guarded against
// with a fallocate before every append (one system call that also takes
// the backing inode's lock: on ext4 about 6% of a streaming write's CPU).
// Only where preallocation is on; other writers cannot write these blocks,
// which the caller holds. A reserved writer knows the size without asking:
// while writers are reserved, the file grows only by their pwrites.
func (f *File) freshBlocks(cOff uint64, kind writeKind) (cs uint64, fresh bool) {
	if f.opts.NoPrealloc || f.e.preallocUnsupported.Load() {
		return 0, false
	}
	if kind == writeReserved {
		cs = max(f.e.ext.startCS, f.e.ext.okEnd.Load())
		return cs, cs <= cOff
	}
	cs, err := fstatSize(f.fd)
	return cs, err == nil && cs <= cOff
}

// writeKind tells mergeChunk and writeBlocks what the caller holds.
type writeKind uint8

const (
	// writeExclusive: the content lock, exclusively.
	writeExclusive writeKind = iota
	// writeNewFile: the content lock exclusively, and the file has no
	// header yet: write one.
	writeNewFile
	// writeReserved: the content lock shared, the blocks written in the
	// range lock, and a size reservation (extend.go).
	writeReserved
)

// dropFresh undoes a failed write of fresh blocks at [off, off+n) into a
// file that had ciphertext size cs: the part written before the disk filled
// up is punched out, so that those blocks read as holes (a partial block
// would not authenticate), and the file is cut back to where the data of
// the successful writes ends, so that it does not end in a partial block
// of zeros. A writer alone with the file cuts it at once; one among other
// reserved writers (extend.go) leaves the cut to the last of them, since
// cutting while another one extends the file would lose that one's data.
// Failures are logged: the write fails anyway.
func (f *File) dropFresh(cs, off, n uint64) {
	err := syscallcompat.Fallocate(f.fd, syscallcompat.FallocPunchHole|syscallcompat.FallocKeepSize, int64(off), int64(n))
	if err != nil {
		f.log.Warn("could not punch out a failed append", "ino", f.ino, "err", err)
	}
	x := &f.e.ext
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.active == 0 {
		// Not a reserved writer: the content lock is held exclusively,
		// so cs is still where the data ends.
		f.cutTo(cs)
	}
	// A reserved writer fails, and the last writer to leave has the file
	// cut back to the end of the data (extend.go, pendingCut).
}

// cutTo cuts the backing file to ciphertext size cs if it is longer.
func (f *File) cutTo(cs uint64) {
	now, err := fstatSize(f.fd)
	if err == nil && now > cs {
		err = syscallcompat.Ftruncate(f.fd, int64(cs))
	}
	if err != nil {
		f.log.Warn("could not cut off a failed append", "ino", f.ino, "err", err)
	}
}

// prealloc reserves the ciphertext range [off, off+length) on disk without
// changing the file size, unless preallocation is off or unsupported by the
// backing filesystem. Only a full disk or quota is an error; other
// failures are logged and the write goes ahead unprotected.
func (f *File) prealloc(off, length uint64) error {
	if f.opts.NoPrealloc || f.e.preallocUnsupported.Load() || length == 0 {
		return nil
	}
	err := syscallcompat.Fallocate(f.fd, syscallcompat.FallocKeepSize, int64(off), int64(length))
	switch err {
	case nil:
		return nil
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		f.e.preallocUnsupported.Store(true)
		return nil
	case syscall.ENOSPC, syscall.EDQUOT:
		return opError("fallocate", err)
	}
	f.log.Warn("preallocation failed, writing anyway", "ino", f.ino, "err", err)
	return nil
}

package contentio

// Locking: which locks this file takes, in which order and mode, is
// described in docs/internals.md (sections 3 and 5).

import (
	"context"
	"fmt"
	"syscall"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// Truncate sets the plaintext size to size (docs/format.md 4.7):
//
//   - to 0: the backing file is truncated to 0 bytes, dropping the header,
//     so the next write draws a new file ID;
//   - shrinking to a size inside a block: the new last block is decrypted,
//     the backing file cut at its start, and the block written back
//     shortened (fresh nonce); at a block boundary the backing file is just
//     cut;
//   - growing within the old last block: one zero byte is written at
//     size−1;
//   - growing further: the old last block is padded with zeros to 4096
//     bytes; then a block-aligned size is reached with ftruncate (the new
//     blocks are holes; an empty file first gets a header), any other size
//     by writing one zero byte at size−1 (the blocks before it stay holes).
//
// ctx ends a wait for locks as in WriteAtContext.
func (f *File) Truncate(ctx context.Context, size uint64) error {
	if size > f.maxPlain {
		return fmt.Errorf("contentio: truncate to %d: %w", size, syscall.EFBIG)
	}
	h, err := f.exclusiveLock(ctx)
	if err != nil {
		return err
	}
	defer f.release(h)
	return f.truncateLocked(size)
}

// truncateLocked is Truncate with the content lock held exclusively.
func (f *File) truncateLocked(n uint64) error {
	if n == 0 {
		if err := syscallcompat.Ftruncate(f.fd, 0); err != nil {
			return opError("ftruncate", err)
		}
		f.e.setID([contentenc.FileIDLen]byte{}, false)
		return nil
	}
	cs, ps, err := f.sizes()
	switch {
	case err != nil:
		return err
	case n == ps:
		return nil
	case n < ps:
		return f.shrink(n)
	}
	return f.grow(cs, ps, n)
}

// shrink cuts the file to plaintext size n, 0 < n < current size.
func (f *File) shrink(n uint64) error {
	id, err := f.fileID(true)
	if err != nil {
		return err
	}
	lastBlock, rem := n/bs, n%bs
	cut := f.ce.BlockNoToCipherOff(lastBlock)
	if rem == 0 {
		if err := syscallcompat.Ftruncate(f.fd, int64(cut)); err != nil {
			return opError("ftruncate", err)
		}
		return nil
	}
	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	cbuf := f.ce.GetCBuf()
	defer f.ce.PutCBuf(cbuf)
	old, err := f.readBlock((*pbuf)[:0], lastBlock, id, *cbuf)
	if err != nil {
		return err
	}
	if uint64(len(old)) < rem {
		// Only if the file changed behind our back; keep the size promise.
		old = append(old, zeroBlock[:rem-uint64(len(old))]...)
	}
	// Cutting first frees space, so the rewrite below cannot run out of it
	// where the old, longer block fitted.
	if err := syscallcompat.Ftruncate(f.fd, int64(cut)); err != nil {
		return opError("ftruncate", err)
	}
	return f.writeBlocks(old[:rem], lastBlock, id, writeExclusive, *cbuf)
}

// grow extends the file from plaintext size ps (ciphertext size cs) to n.
func (f *File) grow(cs, ps, n uint64) error {
	if ps > 0 && (ps-1)/bs == (n-1)/bs {
		return f.writeChunk(zeroBlock[:1], n-1)
	}
	if ps%bs != 0 {
		if err := f.writeChunk(zeroBlock[:bs-ps%bs], ps); err != nil {
			return err
		}
	}
	if n%bs != 0 {
		return f.writeChunk(zeroBlock[:1], n-1)
	}
	if cs <= contentenc.HeaderLen {
		h := contentenc.RandomHeader(nil)
		var buf [contentenc.HeaderLen]byte
		if err := syscallcompat.PwriteFull(f.fd, h.AppendTo(buf[:0]), 0); err != nil {
			return opError("pwrite header", err)
		}
		f.e.setID(h.ID, true)
	}
	if err := syscallcompat.Ftruncate(f.fd, int64(f.ce.PlainSizeToCipherSize(n))); err != nil {
		return opError("ftruncate", err)
	}
	return nil
}

// Allocate implements fallocate(2) on the plaintext range [off, off+length)
// for mode 0 and FALLOC_FL_KEEP_SIZE; other modes (punching holes,
// collapsing or zeroing ranges) fail with EOPNOTSUPP. Mode 0 reaching past
// the end of file first grows the file as Truncate would; both modes then
// reserve the ciphertext of the range on disk with
// fallocate(FALLOC_FL_KEEP_SIZE), up to the end of the range's data and
// not to the end of its last block (CipherExtent), as much as writing the
// range would take. Allocated but unwritten blocks read as
// zeros, which the format treats as holes, so the contents do not change.
func (f *File) Allocate(ctx context.Context, off, length uint64, mode uint32) error {
	if mode&^syscallcompat.FallocKeepSize != 0 {
		return fmt.Errorf("contentio: fallocate mode %#x: %w", mode, syscall.EOPNOTSUPP)
	}
	if length == 0 {
		return fmt.Errorf("contentio: fallocate of 0 bytes: %w", syscall.EINVAL)
	}
	if off > f.maxPlain || length > f.maxPlain-off {
		return fmt.Errorf("contentio: fallocate [%d, +%d): %w", off, length, syscall.EFBIG)
	}
	h, err := f.exclusiveLock(ctx)
	if err != nil {
		return err
	}
	defer f.release(h)
	if mode == 0 {
		_, ps, err := f.sizes()
		if err != nil {
			return err
		}
		if off+length > ps {
			if err := f.truncateLocked(off + length); err != nil {
				return err
			}
		}
	}
	cOff, cLen := f.ce.CipherExtent(off, length)
	if err := syscallcompat.Fallocate(f.fd, syscallcompat.FallocKeepSize, int64(cOff), int64(cLen)); err != nil {
		return opError("fallocate", err)
	}
	return nil
}

package contentio

// Locking: which locks this file takes, in which order and mode, is
// described in docs/internals.md (sections 3 and 6).

import (
	"context"
	"errors"
	"io"
	"syscall"

	"gocryptfs/internal/contentenc"
)

// Verify checks that the whole file decrypts, for -fsck: the header (when
// the file has content) and every block that is not inside a hole of the
// backing file. It returns nil, the first *CorruptError found (header or
// lowest bad block; errors.Is(err, syscall.EIO)), an I/O error, or
// ctx.Err() when cancelled. Unlike ReadAt it does not log corruption; the
// caller reports it. Files of 1..18 bytes are empty by definition and pass,
// as in the reference. The content lock is taken per chunk, so a long
// verification does not block writers for long.
func (f *File) Verify(ctx context.Context) error {
	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	// A separate destination buffer is needed because readChunk decrypts
	// into a pooled buffer of its own; one chunk at a time.
	dst := (*pbuf)[:chunkBlocks*bs]
	var off uint64
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		next, done, err := f.verifyStep(ctx, dst, off, first)
		if err != nil || done {
			return err
		}
		off = next
	}
}

// verifyStep verifies the next data range at or after off (at most one
// chunk) under the shared content lock, checking the header on the first
// call. It returns the offset to continue at, or done at end of file.
func (f *File) verifyStep(ctx context.Context, dst []byte, off uint64, checkHeader bool) (next uint64, done bool, err error) {
	lk, err := f.sharedLock(ctx, 0, 0)
	if err != nil {
		return 0, false, err
	}
	defer f.release(lk)
	cs, ps, err := f.sizes()
	if err != nil {
		return 0, false, err
	}
	if cs <= contentenc.HeaderLen || off >= ps {
		return 0, true, nil
	}
	if checkHeader {
		// Check the on-disk header itself, not a cached copy.
		f.e.setID([contentenc.FileIDLen]byte{}, false)
		if _, err := f.fileID(false); err != nil {
			return 0, false, err
		}
	}
	d, err := f.coarseSeekData(off, ps)
	if errors.Is(err, syscall.ENXIO) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	h, err := f.coarseSeekHole(d, cs, ps)
	if err != nil {
		return 0, false, err
	}
	// Cover whole blocks, at least one, so that every step makes progress
	// whatever the backing filesystem's lseek reports.
	d = d / bs * bs
	end := max((h+bs-1)/bs*bs, d+bs)
	n := min(end-d, uint64(len(dst)))
	k, err := f.readLocked(dst[:n], d, false)
	if err != nil && err != io.EOF {
		return 0, false, err
	}
	if uint64(k) < n {
		return 0, true, nil // the file shrank meanwhile
	}
	return d + n, false, nil
}

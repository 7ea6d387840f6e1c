package contentio

// Locking: which locks this file takes, in which order and mode, is
// described in docs/internals.md (sections 3 and 6).

import (
	"context"
	"errors"
	"io"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// ReadAt reads len(dst) plaintext bytes starting at off, implementing
// io.ReaderAt: it returns fewer bytes only at end of file, together with
// io.EOF. Holes read as zeros. It fetches the touched ciphertext blocks
// with one pread per chunk of up to chunkBlocks blocks and decrypts them
// in pooled buffers (in parallel for large reads).
//
// A bad header or a block that fails to authenticate fails the whole read
// with a *CorruptError (errors.Is(err, syscall.EIO)); it is logged once per
// state of the file (inode and ctime) and Table, however often the file is
// opened and read. Reads that do not touch a bad block still succeed.
func (f *File) ReadAt(dst []byte, off int64) (int, error) {
	return f.ReadAtContext(context.Background(), dst, off)
}

// ReadAtContext is ReadAt on behalf of a request with context ctx: with
// SharedStorage, waiting for byte-range locks that others hold ends with
// an error wrapping EINTR when ctx is cancelled (see Options.lockTimeout).
func (f *File) ReadAtContext(ctx context.Context, dst []byte, off int64) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	if err := f.checkRange(off, 0); err != nil {
		if off < 0 {
			return 0, err
		}
		return 0, io.EOF // beyond any possible file size
	}
	h, err := f.sharedLock(ctx, uint64(off), uint64(len(dst)))
	if err != nil {
		return 0, err
	}
	defer f.release(h)
	return f.readLocked(dst, uint64(off), true)
}

// readLocked is ReadAt with the content lock held (shared or exclusive).
// logCorrupt selects whether corruption is logged (Verify reports it to its
// caller instead).
func (f *File) readLocked(dst []byte, off uint64, logCorrupt bool) (int, error) {
	done := 0
	for done < len(dst) {
		pos := off + uint64(done)
		// Cut the request at a chunk boundary so that one pooled buffer
		// holds all blocks of the piece.
		limit := (pos/bs + chunkBlocks) * bs
		n := min(uint64(len(dst)-done), limit-pos)
		k, err := f.readChunk(dst[done:done+int(n)], pos, logCorrupt)
		done += k
		if err != nil {
			return done, err
		}
		if k < int(n) {
			return done, io.EOF
		}
	}
	return done, nil
}

// readChunk reads dst (at most chunkBlocks blocks) at off. It returns fewer
// bytes than len(dst) only at end of file.
func (f *File) readChunk(dst []byte, off uint64, logCorrupt bool) (int, error) {
	first, count := contentenc.BlockRange(off, uint64(len(dst)))
	cOff := f.ce.BlockNoToCipherOff(first)
	cbuf := f.ce.GetCBuf()
	defer f.ce.PutCBuf(cbuf)
	id, haveID := f.cachedID()
	// The first READ of a small file starts at block 0 and does not know
	// the file ID yet: the header sits right before block 0, so one pread
	// fetches both (the pool's buffers have room for the header).
	start := cOff
	if !haveID && first == 0 {
		start = 0
	}
	c := (*cbuf)[:cOff-start+count*f.cbs]
	m, err := f.preadCipher(c, start)
	if err != nil {
		return 0, opError("pread", err)
	}
	if start < cOff {
		if uint64(m) <= cOff {
			// No block: a file of size 0. A backing file of 1..17
			// bytes also reads as empty (Size reports and logs it).
			return 0, nil
		}
		if id, err = f.parseID(c[:contentenc.HeaderLen], logCorrupt); err != nil {
			return 0, err
		}
		c = c[cOff:m]
	} else {
		if m == 0 {
			return 0, nil
		}
		c = c[:m]
		if !haveID {
			if id, err = f.readID(logCorrupt); err != nil {
				return 0, err
			}
		}
	}
	if off == first*bs && f.ce.PlainLen(len(c)) <= len(dst) {
		// A block-aligned request that holds all the plaintext (the
		// kernel's usual case): decrypt straight into dst, without a
		// copy. The capacity is cut to len(dst) so that nothing beyond
		// the request is written; on error DecryptBlocks leaves no
		// unauthenticated plaintext in it.
		plain, err := f.ce.DecryptBlocks(dst[:0:len(dst)], c, first, id[:])
		if err != nil {
			return 0, f.corrupt(err, logCorrupt)
		}
		return len(plain), nil
	}
	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	plain, err := f.ce.DecryptBlocks((*pbuf)[:0], c, first, id[:])
	if err != nil {
		return 0, f.corrupt(err, logCorrupt)
	}
	skip := off - first*bs
	if skip >= uint64(len(plain)) {
		return 0, nil
	}
	return copy(dst, plain[skip:]), nil
}

// preadCipher reads ciphertext into buf at off, which is the start of the
// header or of a block, until buf is full or the file ends. The kernel
// returns fewer bytes than asked from a regular file only at its end (or
// when interrupted), so a short read that ends inside a block is taken as
// the end of file without asking again: most files do not end on a block
// boundary, and this saves them a second pread that would return 0. (Were
// the short read an interruption after all, the cut block fails to
// authenticate: EIO, never wrong plaintext.) A short read that ends on a
// block boundary is continued, to tell the end of file from an
// interruption there.
func (f *File) preadCipher(buf []byte, off uint64) (int, error) {
	done := 0
	for done < len(buf) {
		n, err := syscallcompat.RetryInt(func() (int, error) {
			return unix.Pread(f.fd, buf[done:], int64(off)+int64(done))
		})
		if err != nil {
			return done, err
		}
		if n == 0 {
			break
		}
		done += n
		if end := off + uint64(done); done < len(buf) && end > contentenc.HeaderLen && (end-contentenc.HeaderLen)%f.cbs != 0 {
			break
		}
	}
	return done, nil
}

// cachedID returns the cached file ID, unless there is none or every read
// must check the header on disk (SharedStorage: another mount may have
// rewritten the file).
func (f *File) cachedID() ([contentenc.FileIDLen]byte, bool) {
	if f.opts.SharedStorage {
		return [contentenc.FileIDLen]byte{}, false
	}
	return f.e.cachedID()
}

// fileID returns the file ID of a non-empty file: the cached one, or the one
// read and validated from the header on disk. The caller holds the content
// lock, shared or exclusive.
func (f *File) fileID(logCorrupt bool) ([contentenc.FileIDLen]byte, error) {
	if id, ok := f.cachedID(); ok {
		return id, nil
	}
	return f.readID(logCorrupt)
}

// readID reads the header from disk and returns its file ID (see parseID).
func (f *File) readID(logCorrupt bool) ([contentenc.FileIDLen]byte, error) {
	var buf [contentenc.HeaderLen]byte
	n, err := syscallcompat.PreadFull(f.fd, buf[:], 0)
	if err != nil {
		return [contentenc.FileIDLen]byte{}, opError("pread header", err)
	}
	return f.parseID(buf[:n], logCorrupt)
}

// parseID validates the header hdr read from disk, caches its file ID and
// returns it. The caller holds the content lock, shared or exclusive.
func (f *File) parseID(hdr []byte, logCorrupt bool) ([contentenc.FileIDLen]byte, error) {
	h, err := contentenc.ParseHeader(hdr)
	if err != nil {
		return [contentenc.FileIDLen]byte{}, f.corrupt(err, logCorrupt)
	}
	// Concurrent readers (and reserved writers) may both get here; they
	// read the same header, since those who write one hold content
	// exclusively, so the last store wins harmlessly.
	f.e.setID(h.ID, true)
	return h.ID, nil
}

// corrupt turns a contentenc error into a *CorruptError, logging the first
// one per inode when asked to.
func (f *File) corrupt(err error, log bool) error {
	ce := &CorruptError{Ino: f.ino, Err: err}
	var be *contentenc.CorruptBlockError
	if errors.As(err, &be) {
		ce.Block = be.BlockNo
	} else {
		ce.Header = true
	}
	if log && !f.e.loggedCorrupt.Swap(true) && f.t.firstReport(f.version()) {
		f.log.Warn(ce.Error(), "ino", f.ino)
	}
	return ce
}

// version returns the identity of the file's current state (for logging
// corruption once per state). A failing fstat gives a zero ctime.
func (f *File) version() versionKey {
	var st unix.Stat_t
	syscallcompat.Fstat(f.fd, &st)
	return versionKey{inodeKey: f.e.key, ctimeSec: st.Ctim.Sec, ctimeNsec: st.Ctim.Nsec}
}

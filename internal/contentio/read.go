package contentio

import (
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
	if len(dst) == 0 {
		return 0, nil
	}
	if err := f.checkRange(off, 0); err != nil {
		if off < 0 {
			return 0, err
		}
		return 0, io.EOF // beyond any possible file size
	}
	defer f.release(f.sharedLock(uint64(off), uint64(len(dst))))
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
	c := (*cbuf)[:count*f.cbs]
	m, err := syscallcompat.PreadFull(f.fd, c, int64(cOff))
	if err != nil {
		return 0, opError("pread", err)
	}
	if m == 0 {
		return 0, nil
	}
	id, err := f.fileID(logCorrupt)
	if err != nil {
		return 0, err
	}
	if off == first*bs && f.ce.PlainLen(m) <= len(dst) {
		// A block-aligned request that holds all the plaintext (the
		// kernel's usual case): decrypt straight into dst, without a
		// copy. The capacity is cut to len(dst) so that nothing beyond
		// the request is written; on error DecryptBlocks leaves no
		// unauthenticated plaintext in it.
		plain, err := f.ce.DecryptBlocks(dst[:0:len(dst)], c[:m], first, id[:])
		if err != nil {
			return 0, f.corrupt(err, logCorrupt)
		}
		return len(plain), nil
	}
	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	plain, err := f.ce.DecryptBlocks((*pbuf)[:0], c[:m], first, id[:])
	if err != nil {
		return 0, f.corrupt(err, logCorrupt)
	}
	skip := off - first*bs
	if skip >= uint64(len(plain)) {
		return 0, nil
	}
	return copy(dst, plain[skip:]), nil
}

// fileID returns the file ID of a non-empty file: the cached one, or the one
// read and validated from the header on disk. The caller holds the content
// lock, shared or exclusive.
func (f *File) fileID(logCorrupt bool) ([contentenc.FileIDLen]byte, error) {
	if id, ok := f.e.cachedID(); ok && !f.opts.SharedStorage {
		return id, nil
	}
	var buf [contentenc.HeaderLen]byte
	n, err := syscallcompat.PreadFull(f.fd, buf[:], 0)
	if err != nil {
		return [contentenc.FileIDLen]byte{}, opError("pread header", err)
	}
	h, err := contentenc.ParseHeader(buf[:n])
	if err != nil {
		return [contentenc.FileIDLen]byte{}, f.corrupt(err, logCorrupt)
	}
	// Concurrent readers may both get here; they read the same header,
	// since writers are excluded, so the last store wins harmlessly.
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

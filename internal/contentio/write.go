package contentio

import (
	"syscall"

	"golang.org/x/sys/unix"

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
//   - unless Options.NoPrealloc, the ciphertext range is reserved with
//     fallocate(FALLOC_FL_KEEP_SIZE) first, so that a full disk fails the
//     write (ENOSPC) before any block is touched;
//   - all ciphertext blocks of a chunk (up to 257 blocks, so a whole 1 MiB
//     request) go out with one pwrite.
//
// On error it returns the number of bytes of data completely written
// before the failing chunk. A failure in the middle of a pwrite can leave
// only the blocks of that chunk unreadable, never other blocks. Writes to
// disjoint blocks inside the file run in parallel; writes sharing a block,
// and writes that change the size, are serialized (see the package
// comment). O_APPEND is the
// caller's business: use Append.
func (f *File) WriteAt(data []byte, off int64) (int, error) {
	if err := f.checkRange(off, len(data)); err != nil {
		return 0, err
	}
	if len(data) == 0 {
		return 0, nil
	}
	defer f.release(f.writeLock(uint64(off), uint64(len(data))))
	return f.writeLocked(data, uint64(off))
}

// Append writes data at the current end of file, atomically with respect
// to all other operations on the inode, for files opened with O_APPEND. It
// returns the offset at which data was written and the number of bytes
// written.
func (f *File) Append(data []byte) (off int64, n int, err error) {
	defer f.release(f.exclusiveLock())
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
	n, err = f.writeLocked(data, ps)
	return int64(ps), n, err
}

// writeLocked is WriteAt with the content lock held exclusively, or held
// shared together with the blocks of the write exclusively when the write
// stays inside the file (File.writeLock).
func (f *File) writeLocked(data []byte, off uint64) (int, error) {
	done := 0
	for done < len(data) {
		pos := off + uint64(done)
		limit := (pos/bs + chunkBlocks) * bs
		n := int(min(uint64(len(data)-done), limit-pos))
		if err := f.writeChunk(data[done:done+n], pos); err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// writeChunk writes data (non-empty, touching at most chunkBlocks blocks)
// at off, with the locks of writeLocked held.
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
	end := off + uint64(len(data))
	last := (end - 1) / bs
	nb := last - first + 1
	if ps%bs != 0 && first > ps/bs {
		// Writing past the block that holds the end of file: pad that
		// block to full length. Reserve the space of the write itself
		// first, so that a full disk fails it before the padding changes
		// the file. The recursive call stays within one block, so it does
		// not come back here.
		if err := f.prealloc(f.ce.BlockNoToCipherOff(first), nb*f.cbs); err != nil {
			return err
		}
		if err := f.writeChunk(zeroBlock[:bs-ps%bs], ps); err != nil {
			return err
		}
		ps += bs - ps%bs
	}

	head := off - first*bs    // plaintext before data in the first block
	dataEnd := end - first*bs // where data ends, relative to the first block

	cbuf := f.ce.GetCBuf()
	defer f.ce.PutCBuf(cbuf)
	firstOld := oldLen(ps, first)
	needFirst := firstOld > 0 && (head > 0 || (nb == 1 && dataEnd < firstOld))
	needLast := nb > 1 && oldLen(ps, last) > end-last*bs
	if head == 0 && !needFirst && !needLast {
		// Whole blocks, or a tail that ends at or beyond the old end of
		// file: nothing old to merge, so encrypt data itself without
		// copying it first.
		return f.writeBlocks(data, first, id, newHeader, *cbuf)
	}

	pbuf := f.ce.GetPBuf()
	defer f.ce.PutPBuf(pbuf)
	plain := (*pbuf)[:nb*bs]
	plainLen := dataEnd

	// Old first block: needed for the bytes before data and, if the write
	// ends in the same block, after it.
	if needFirst {
		old, err := f.readBlock(plain[:0], first, id, *cbuf)
		if err != nil {
			return err
		}
		firstOld = uint64(len(old))
		if nb == 1 {
			plainLen = max(plainLen, firstOld)
		}
	} else {
		firstOld = 0
	}
	if firstOld < head {
		clear(plain[firstOld:head])
	}
	// Old last block, if different: needed for the bytes after data.
	if needLast {
		old, err := f.readBlock(plain[:(nb-1)*bs], last, id, *cbuf)
		if err != nil {
			return err
		}
		plainLen = max(plainLen, uint64(len(old)))
	}
	copy(plain[head:], data)
	return f.writeBlocks(plain[:plainLen], first, id, newHeader, *cbuf)
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
// writes them, preceded by the header when newHeader is set. scratch is a
// pooled ciphertext buffer (capacity for a header and chunkBlocks blocks);
// the header goes to its first HeaderLen bytes so that header and block 0
// of a new file go out with a single pwrite.
func (f *File) writeBlocks(plain []byte, first uint64, id [contentenc.FileIDLen]byte, newHeader bool, scratch []byte) error {
	const hl = contentenc.HeaderLen
	c := f.ce.EncryptBlocks(scratch[:hl], plain, first, id[:])
	cOff := f.ce.BlockNoToCipherOff(first)
	if err := f.prealloc(cOff, uint64(len(c)-hl)); err != nil {
		return err
	}
	out, outOff := c[hl:], cOff
	if newHeader {
		contentenc.FileHeader{Version: contentenc.CurrentVersion, ID: id}.AppendTo(c[:0])
		if first == 0 {
			out, outOff = c, 0
		} else if err := syscallcompat.PwriteFull(f.fd, c[:hl], 0); err != nil {
			return opError("pwrite header", err)
		}
		f.e.setID(id, true)
	}
	if err := syscallcompat.PwriteFull(f.fd, out, int64(outOff)); err != nil {
		return opError("pwrite", err)
	}
	return nil
}

// prealloc reserves the ciphertext range [off, off+length) on disk without
// changing the file size, unless preallocation is off or unsupported by the
// backing filesystem. Only a full disk or quota is an error; other
// failures are logged and the write goes ahead unprotected.
func (f *File) prealloc(off, length uint64) error {
	if f.opts.NoPrealloc || f.e.preallocUnsupported.Load() || length == 0 {
		return nil
	}
	err := syscallcompat.Fallocate(f.fd, unix.FALLOC_FL_KEEP_SIZE, int64(off), int64(length))
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

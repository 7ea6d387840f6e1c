package fusefrontend_reverse

import (
	"context"
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// fileHandle is an open plaintext file whose ciphertext the view shows:
// header ‖ blocks encrypted with nonces derived from the content path
// (docs/format.md 9.4).
type fileHandle struct {
	rn *RootNode
	fd int
	// header is BE16(2) ‖ pathiv(path, "FILEID"); its last 16 bytes are
	// the file ID in every block's associated data.
	header [contentenc.HeaderLen]byte
	// block0IV is pathiv(path, "BLOCK0IV"), the nonce of block 0.
	block0IV []byte
}

var (
	_ fs.FileReader    = (*fileHandle)(nil)
	_ fs.FileReleaser  = (*fileHandle)(nil)
	_ fs.FileGetattrer = (*fileHandle)(nil)
)

// newFileHandle derives header and nonces from the ciphertext path cPath.
func newFileHandle(rn *RootNode, fd int, cPath string) *fileHandle {
	f := &fileHandle{rn: rn, fd: fd}
	binary.BigEndian.PutUint16(f.header[:2], contentenc.CurrentVersion)
	copy(f.header[2:], nametransform.PathIV(cPath, nametransform.PurposeFileID))
	f.block0IV = nametransform.PathIV(cPath, nametransform.PurposeBlock0IV)
	return f
}

// Read returns the view's bytes [off, off+len(dest)).
func (f *fileHandle) Read(ctx context.Context, dest []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	defer fuseutil.Recover(f.rn.log, "Read", &errno)
	f.rn.enter("Read")
	if off < 0 {
		return nil, syscall.EINVAL
	}
	n, err := f.readCipher(dest, uint64(off))
	if err != nil {
		return nil, f.rn.errno("Read", fmt.Errorf("read at %d: %w", off, err))
	}
	return f.rn.readResults.Get(dest[:n]), 0
}

// readCipher fills dest with ciphertext starting at offset off, chunk by
// chunk, each chunk at most as large as one pooled buffer. It stops early
// at the end of the file.
func (f *fileHandle) readCipher(dest []byte, off uint64) (int, error) {
	done := 0
	for done < len(dest) {
		n, eof, err := f.readChunk(dest[done:], off+uint64(done))
		done += n
		if err != nil || eof || n == 0 {
			return done, err
		}
	}
	return done, nil
}

// readChunk reads the plaintext blocks behind (a prefix of) the ciphertext
// range [off, off+len(dest)), encrypts them with derived nonces into a
// pooled buffer and copies the wanted part to dest. eof reports that the
// plaintext ended inside the chunk.
func (f *fileHandle) readChunk(dest []byte, off uint64) (n int, eof bool, err error) {
	ce := f.rn.ce
	cbs := uint64(ce.CipherBS())
	const hl = contentenc.HeaderLen
	first := uint64(0)
	if off >= hl {
		first = (off - hl) / cbs
	}
	end := off + uint64(len(dest))
	last := uint64(0)
	if end > hl {
		last = (end - 1 - hl) / cbs
	}
	count := min(last-first+1, contentenc.PoolBlocks)

	pbuf := ce.GetPBuf()
	defer ce.PutPBuf(pbuf)
	cbuf := ce.GetCBuf()
	defer ce.PutCBuf(cbuf)

	plain := (*pbuf)[:count*contentenc.DefaultBS]
	pn, err := syscallcompat.PreadFull(f.fd, plain, int64(first*contentenc.DefaultBS))
	if err != nil {
		return 0, false, err
	}
	eof = pn < len(plain)
	if pn == 0 {
		// Also an empty file: it is shown without a header.
		return 0, true, nil
	}
	// segStart is the view offset of the first byte placed in c.
	segStart := hl + first*cbs
	c := (*cbuf)[:0]
	if first == 0 {
		c = append(c, f.header[:]...)
		segStart = 0
	}
	c, err = ce.EncryptBlocksDerived(c, plain[:pn], first, f.header[2:], f.block0IV)
	if err != nil {
		return 0, false, err
	}
	*cbuf = c[:0] // keep a grown buffer for the pool
	skip := off - segStart
	if skip >= uint64(len(c)) {
		return 0, true, nil
	}
	return copy(dest, c[skip:]), eof, nil
}

// Getattr reports the attributes from the open fd.
func (f *fileHandle) Getattr(ctx context.Context, out *fuse.AttrOut) (errno syscall.Errno) {
	defer fuseutil.Recover(f.rn.log, "Getattr", &errno)
	f.rn.enter("Getattr")
	var st unix.Stat_t
	if err := syscallcompat.Fstat(f.fd, &st); err != nil {
		return f.rn.errno("Getattr", err)
	}
	f.rn.fillAttr(kindFile, &st, &out.Attr)
	return 0
}

// Release closes the plaintext fd.
func (f *fileHandle) Release(ctx context.Context) (errno syscall.Errno) {
	defer fuseutil.Recover(f.rn.log, "Release", &errno)
	// Close first: a panic in the hook must not leak the fd.
	syscallcompat.Close(f.fd)
	f.rn.enter("Release")
	return 0
}

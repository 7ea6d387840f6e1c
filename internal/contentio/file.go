package contentio

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// bs is the plaintext block size as an unsigned number, for arithmetic.
const bs = contentenc.DefaultBS

// chunkBlocks is the largest number of blocks handled by one pread or
// pwrite: what one pooled contentenc buffer holds. A 1 MiB request that
// does not start on a block boundary touches 257 blocks; it still fits into
// one chunk and costs one system call. Longer requests are processed chunk
// by chunk under the same lock.
const chunkBlocks = contentenc.PoolBlocks

// File is an open regular file of the encrypted filesystem: plaintext
// reads and writes on top of a backing file descriptor. Its methods are safe
// for concurrent use, except that Close must not run concurrently with any
// other method of the same File.
type File struct {
	t    *Table
	e    *entry
	ce   *contentenc.ContentEnc
	fd   int
	ino  uint64
	opts Options
	log  *slog.Logger

	cbs      uint64 // ciphertext block size
	overhead uint64 // per-block overhead
	// maxPlain is the largest plaintext end offset whose ciphertext offset
	// still fits into an int64.
	maxPlain uint64

	closed atomic.Bool
}

// Open wraps fd, a file descriptor of a backing regular file, in a File
// registered in t. fd must be opened O_RDWR for Files that will be written
// (a read-modify-write reads back blocks), O_RDONLY is enough for reading,
// and it must not use O_APPEND (see Append). On success the File owns fd and
// Close closes it; on error the caller keeps ownership.
func Open(t *Table, ce *contentenc.ContentEnc, fd int, opts Options) (*File, error) {
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return nil, opError("fstat", err)
	}
	return OpenStat(t, ce, fd, &st, opts)
}

// OpenStat is Open for a caller that has just taken the stat st of fd's
// inode (syscallcompat.OpenRegularAt hands it out), which saves the fstat
// per open. Only the type and the inode identity are taken from st.
func OpenStat(t *Table, ce *contentenc.ContentEnc, fd int, st *unix.Stat_t, opts Options) (*File, error) {
	if t == nil || ce == nil {
		return nil, fmt.Errorf("contentio: Open: nil table or content encryption: %w", syscall.EINVAL)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("contentio: Open: fd %d is not a regular file: %w", fd, syscall.EINVAL)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cbs := uint64(ce.CipherBS())
	f := &File{
		t:        t,
		e:        t.acquire(inodeKey{dev: uint64(st.Dev), ino: st.Ino}, opts.SharedStorage),
		ce:       ce,
		fd:       fd,
		ino:      st.Ino,
		opts:     opts,
		log:      log,
		cbs:      cbs,
		overhead: uint64(ce.BlockOverhead()),
		maxPlain: (math.MaxInt64 - contentenc.HeaderLen) / cbs * bs,
	}
	return f, nil
}

// Close drops the File's reference to its table entry and closes the
// backing file descriptor. Closing twice returns an error wrapping EBADF.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return fmt.Errorf("contentio: Close: already closed: %w", syscall.EBADF)
	}
	f.t.release(f.e)
	if err := unix.Close(f.fd); err != nil {
		return opError("close", err)
	}
	return nil
}

// Fd returns the backing file descriptor, for operations this package does
// not cover (fchmod, fchown, futimens, fgetxattr, ...). The caller must not
// change the file contents through it, nor close it.
func (f *File) Fd() int {
	return f.fd
}

// Ino returns the inode number of the backing file.
func (f *File) Ino() uint64 {
	return f.ino
}

// Size returns the plaintext size (docs/format.md 4.5) computed from the size of
// the backing file. A backing file of 1..17 bytes has size 0; a last block
// of only 1..overhead bytes counts as one plaintext byte (reading it fails).
// Both are logged once per inode.
func (f *File) Size(ctx context.Context) (uint64, error) {
	h, err := f.sharedLock(ctx, 0, 0)
	if err != nil {
		return 0, err
	}
	defer f.release(h)
	_, ps, err := f.sizes()
	return ps, err
}

// sizes returns the ciphertext and plaintext size of the backing file and
// logs an abnormal ciphertext size once per inode.
func (f *File) sizes() (cs, ps uint64, err error) {
	cs, err = fstatSize(f.fd)
	if err != nil {
		return 0, 0, opError("fstat", err)
	}
	ps, problem := f.ce.CipherSizeToPlainSizeCheck(cs)
	if problem != contentenc.SizeOK && !f.e.warnedSize.Swap(true) {
		f.log.Warn("abnormal ciphertext size", "problem", problem.String(),
			"ino", f.ino, "cipherSize", cs, "plainSize", ps)
	}
	return cs, ps, nil
}

// Fsync flushes the backing file to stable storage: fdatasync(2) when
// datasync is set, fsync(2) otherwise.
func (f *File) Fsync(datasync bool) error {
	var err error
	if datasync {
		err = syscallcompat.Retry(func() error { return fdatasync(f.fd) })
	} else {
		err = syscallcompat.Retry(func() error { return unix.Fsync(f.fd) })
	}
	if err != nil {
		return opError("fsync", err)
	}
	return nil
}

// checkRange validates a plaintext range [off, off+n) for reads and writes.
func (f *File) checkRange(off int64, n int) error {
	if off < 0 {
		return fmt.Errorf("contentio: negative offset %d: %w", off, syscall.EINVAL)
	}
	if uint64(off) > f.maxPlain || uint64(n) > f.maxPlain-uint64(off) {
		return fmt.Errorf("contentio: range [%d, +%d) beyond the largest file size: %w", off, n, syscall.EFBIG)
	}
	return nil
}

// fstatSize returns the size of the file behind fd.
func fstatSize(fd int) (uint64, error) {
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return uint64(st.Size), nil
}

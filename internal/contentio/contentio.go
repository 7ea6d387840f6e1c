// Package contentio reads and writes the encrypted contents of one regular
// file through a file descriptor of its backing (ciphertext) file, following
// docs/format.md section 4: the 18-byte header, independently encrypted 4 KiB
// blocks, holes, and the reference's write, truncate and extend rules.
//
// It knows nothing about FUSE: the forward frontend wraps every open file in
// a File, and -fsck verifies files with File.Verify. The block cryptography
// itself (header parsing, sealing and opening blocks, size arithmetic) lives
// in package contentenc; this package adds the file-level logic around it:
// which blocks to fetch, read-modify-write of partial blocks, zero padding,
// preallocation, and the locking that makes concurrent access to one inode
// behave like a local filesystem.
//
// Every backing inode that is open has one entry in a Table, shared by all
// Files of that inode (several opens, hard links). The entry holds a
// reader/writer content lock, a block-range lock and the cached file ID.
// Whether a write must create the header, pad the old last block or extend
// a block depends on the current file size, and a partial block is read,
// merged and rewritten as a whole, so two writers touching the same block
// or the end of file must not interleave. Hence: operations that change
// the size on their own terms (truncate, fallocate, append, writes that
// create the header) hold the content lock exclusively; reads and writes
// hold it shared plus their blocks in the range lock (readers shared,
// writers exclusively), so writers of disjoint blocks of one file run in
// parallel and a read never sees a block half rewritten. Writers past the
// end of file agree on the size through reservations (extend.go). With
// SharedStorage every operation is serialized per inode (see shared.go).
// docs/internals.md describes all of these locks, their order and the
// size changes in one place.
//
// Errors wrap syscall.Errno values: EIO for corrupt ciphertext (a
// *CorruptError, also matching contentenc's sentinel errors), the kernel's
// errno (ENOSPC, EDQUOT, EBADF, ...) for failed system calls, EINVAL for bad
// arguments, EOPNOTSUPP for unsupported fallocate modes. A frontend maps
// them with errors.As(err, &errno). Reads follow io.ReaderAt: a short read
// at end of file returns io.EOF.
package contentio

import (
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"gocryptfs/internal/syscallcompat"
)

// Options configures the Files opened by Open.
type Options struct {
	// NoPrealloc disables the fallocate(FALLOC_FL_KEEP_SIZE) call that
	// reserves disk space for the ciphertext range of a write that
	// rewrites blocks before it is written (appends are cleaned up after
	// a failure instead). Preallocation exists so that running out of
	// space fails the write before any block is touched instead of leaving
	// a half-written block; it is slow on btrfs (it defeats compression and
	// copy-on-write), where the caller should set NoPrealloc (-noprealloc).
	NoPrealloc bool
	// SharedStorage makes concurrent access to a backing file by several
	// mounts safe with byte-range locks and disables the file ID cache
	// (see shared.go). All Files of one Table must agree on it.
	SharedStorage bool
	// lockTimeout bounds how long an operation waits, with SharedStorage,
	// for byte-range locks that others hold on the backing file before it
	// fails with EIO (0: DefaultLockTimeout, what the mount uses; only
	// tests set it shorter). The wait also ends, with EINTR, when the
	// context of the operation is cancelled.
	lockTimeout time.Duration
	// LockPolls bounds the repeated attempts of the waits for the
	// SharedStorage locks (syscallcompat.WaitLock); one per mount, shared
	// with its other lock waits. nil: no bound.
	LockPolls *syscallcompat.LockPolls
	// Logger receives corruption reports and warnings. nil discards them.
	Logger *slog.Logger
}

// CorruptError reports ciphertext that failed validation: a bad header, or a
// block that did not authenticate (or was too short, or had an all-zero
// nonce). It unwraps to both syscall.EIO and the underlying contentenc
// error, so errors.Is(err, syscall.EIO) holds and errors.As finds EIO as
// the errno.
type CorruptError struct {
	// Ino is the backing inode number.
	Ino uint64
	// Header is true when the file header is bad; Block is then unused.
	Header bool
	// Block is the number of the first block that failed.
	Block uint64
	// Err is the error from contentenc: a *contentenc.CorruptBlockError
	// ("corrupt block #N: reason") or a header error wrapping
	// contentenc.ErrBadHeader ("ParseHeader: ...").
	Err error
}

// Error returns the message the reference logs, e.g.
// "doRead 1234: corrupt block #0: cipher: message authentication failed".
func (e *CorruptError) Error() string {
	return fmt.Sprintf("doRead %d: %v", e.Ino, e.Err)
}

// Unwrap returns syscall.EIO and the underlying error.
func (e *CorruptError) Unwrap() []error {
	return []error{syscall.EIO, e.Err}
}

// opError adds the operation name to an errno from a system call, keeping
// the errno reachable with errors.As/Is.
func opError(op string, err error) error {
	return fmt.Errorf("contentio: %s: %w", op, err)
}

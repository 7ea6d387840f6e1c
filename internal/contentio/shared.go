package contentio

import (
	"context"
	"fmt"
	"math"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// With Options.SharedStorage, several mounts (on one machine or on several
// machines sharing a network filesystem) may access one backing file at
// once. The in-process content lock only orders the Files of one Table,
// so every operation also takes open-file-description byte-range locks
// (F_OFD_SETLK) on the backing file, which the kernel (and NFSv4, SMB,
// CephFS, GlusterFS between machines) enforces between all mounts:
//
//   - a read holds shared locks on the header and on the ciphertext blocks
//     it reads, so it never sees a block that another mount is rewriting;
//   - a write that stays inside the file holds a shared lock on the header
//     and an exclusive one on the blocks it reads, merges and rewrites;
//   - a write that creates the header, or that touches the block holding
//     the end of file or anything after it (its outcome depends on the
//     file size: padding, extension), as well as truncate, append and
//     fallocate, hold an exclusive lock on the whole file.
//
// All lock requests take the header before the blocks, and a whole-file
// request is a single request, so two mounts cannot deadlock. Within one
// mount, all operations on an inode are serialized (reads too): locks
// belong to the open file description, and two concurrent reads through
// one fd would release each other's locks. The file ID is never cached,
// since another mount may truncate the file and write a new header.
//
// The locks are taken at LockBase + ciphertext offset, never on the
// ciphertext offsets themselves: with -sharedstorage the frontend forwards
// applications' fcntl locks to the backing file (on open file descriptions
// of their own, fusefrontend/locks.go), limited to offsets below LockBase,
// and an application's lock on a range must neither block nor be blocked
// by the internal locks of any mount.
//
// Whoever can write CIPHERDIR can also hold a lock on a ciphertext file,
// there or anywhere else, for as long as it likes. So waiting for a lock
// never holds an OS thread and ends when the request's context is
// cancelled (EINTR; the mount cancels it only for a dying caller,
// fuseserve.Options.FatalInterruptsOnly) or after
// Options.lockTimeout (EIO, logged): see ofdLock. Requests of this mount
// queued behind a waiter for the same inode wait the same way (the
// per-inode serialization is a semaphore, Table's entry.serial, not a
// mutex), from the moment they arrive: a queue behind a lock held
// forever drains within one timeout, and each queued request ends when
// it is interrupted.
//
// docs/internals.md (section 8) sets this beside the locking without
// SharedStorage.

// LockBase is the offset at which the internal byte-range locks of
// SharedStorage start; forwarded application locks must stay below it.
const LockBase = 1 << 62

// lockSpan is one byte range [start, start+len) of ciphertext offsets; len
// 0 means to the end of the file and beyond.
type lockSpan struct {
	start, len uint64
}

var wholeFile = lockSpan{0, 0}

// headerSpan covers the file header.
var headerSpan = lockSpan{0, contentenc.HeaderLen}

// DefaultLockTimeout is the longest an operation waits for the
// byte-range locks of SharedStorage when Options.lockTimeout is 0. Another
// mount holds them only while it reads or writes some blocks or changes
// the size: milliseconds, or seconds on a slow network filesystem. A lock
// held longer is most likely held by someone who wants the mount to hang
// (anyone who can write CIPHERDIR can lock a ciphertext file), and the
// operation fails instead (see ofdLock).
const DefaultLockTimeout = 30 * time.Second

// lockDeadline returns the time after which an operation starting now
// stops waiting for the locks of others. Taken before lockSerial, so that
// requests queued behind a waiter in this mount time out with it instead
// of one timeout after another.
func (f *File) lockDeadline() time.Time {
	return time.Now().Add(f.lockTimeout())
}

// lockTimeout is Options.lockTimeout or its default.
func (f *File) lockTimeout() time.Duration {
	if f.opts.lockTimeout <= 0 {
		return DefaultLockTimeout
	}
	return f.opts.lockTimeout
}

// ofdLock sets the internal lock typ (F_RDLCK or F_WRLCK) on span, waiting
// while others hold a conflicting one, without holding an OS thread
// (syscallcompat.WaitLock: a non-blocking F_OFD_SETLK, retried with
// backoff). A blocking F_OFD_SETLKW would pin a thread per waiting
// request, for as long as whoever holds the lock wants, and the process
// waiting for the request could not even be killed.
//
// It fails with EINTR when ctx is cancelled (the mount does so when the
// kernel interrupted the request of a dying caller; the reply is then
// discarded), and with
// EIO, logged once per inode, when the lock is still taken at deadline.
// EIO because nothing was read or written (the locks come first), and it
// is the answer every program expects from a read or write that failed,
// as from an NFS "soft" mount whose server does not answer; EAGAIN from a
// blocking read(2) or write(2) is undocumented and makes some programs
// spin, others lose track of what was written.
//
// A backing filesystem without lock support is remembered and not asked
// again; the operation then runs unlocked.
func (f *File) ofdLock(ctx context.Context, deadline time.Time, typ int16, span lockSpan) error {
	if f.e.lockUnsupported.Load() {
		return nil
	}
	flk := unix.Flock_t{Type: typ, Whence: unix.SEEK_SET, Start: int64(LockBase + span.start), Len: int64(span.len)}
	err := syscallcompat.WaitLock(ctx, deadline, f.opts.LockPolls, nil, func() error {
		return syscallcompat.Retry(func() error { return ofdSetlk(f.fd, &flk) })
	})
	switch err {
	case nil:
		return nil
	case syscallcompat.Interrupted:
		return opError("wait for byte-range lock", err)
	case syscallcompat.LockTimedOut:
		if !f.e.warnedLock.Swap(true) {
			f.log.Error("-sharedstorage: a byte-range lock on a ciphertext file stayed taken by someone else (another mount, a sync tool or a process that can write CIPHERDIR) past the lock timeout; its reads and writes fail with EIO while that lasts",
				"ino", f.ino, "lockStart", flk.Start, "lockLen", flk.Len, "timeout", f.lockTimeout())
		}
		return f.lockTimedOut()
	}
	if !f.e.lockUnsupported.Swap(true) {
		f.log.Warn("backing filesystem refuses byte-range locks; -sharedstorage cannot protect this file against concurrent mounts",
			"ino", f.ino, "err", err)
	}
	return nil
}

// ofdUnlock releases the internal lock on span.
func (f *File) ofdUnlock(span lockSpan) {
	if f.e.lockUnsupported.Load() {
		return
	}
	flk := unix.Flock_t{Type: unix.F_UNLCK, Whence: unix.SEEK_SET, Start: int64(LockBase + span.start), Len: int64(span.len)}
	syscallcompat.Retry(func() error { return ofdSetlk(f.fd, &flk) })
}

// held records the locks an operation took, for release. It is a value
// (no closure) so that locking allocates nothing.
type held struct {
	spans [2]lockSpan
	n     int  // spans held
	rlock bool // the content lock is held shared
	rslot int  // 1 + the slot of the block-range lock held; 0: none
	// ext is the token of a writer's size reservation (extend.go), 0 for
	// none; the writer ends it itself, since it depends on the outcome.
	ext uint64
}

// release drops the locks of h.
func (f *File) release(h held) {
	for i := range h.n {
		f.ofdUnlock(h.spans[i])
	}
	if h.rslot > 0 {
		f.e.ranges.unlock(h.rslot - 1)
	}
	switch {
	case f.opts.SharedStorage:
		<-f.e.serial
	case h.rlock:
		f.e.content.RUnlock()
	default:
		f.e.content.Unlock()
	}
}

// lockSerial takes the inode alone (SharedStorage), giving up with EINTR
// when ctx is cancelled and with EIO at deadline: the holder may be a
// request that waits for the byte-range locks of others (ofdLock).
func (f *File) lockSerial(ctx context.Context, deadline time.Time) error {
	select {
	case f.e.serial <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case f.e.serial <- struct{}{}:
		return nil
	case <-ctx.Done():
		return opError("wait for the inode", syscallcompat.Interrupted)
	case <-timer.C:
		return f.lockTimedOut()
	}
}

// lockTimedOut returns the error of an operation whose lock wait reached
// its deadline.
func (f *File) lockTimedOut() error {
	return fmt.Errorf("contentio: byte-range lock on inode %d still held by someone else at the lock timeout: %w", f.ino, syscall.EIO)
}

// sharedLock takes the locks for reading the plaintext range [off,
// off+n) (n == 0: the whole file). Without SharedStorage that is the
// content lock shared and the blocks of the range shared: writers of other
// blocks go on, but no block is read while a writer of the same block
// rewrites it. Holding the range is what keeps reads from seeing a torn
// block: pwrite of a ciphertext block is not atomic against a concurrent
// pread (blocks straddle pages, and buffered reads do not take the inode
// lock that buffered writes take), so a reader could otherwise decrypt
// half an old and half a new block and report corruption.
func (f *File) sharedLock(ctx context.Context, off, n uint64) (held, error) {
	if !f.opts.SharedStorage {
		f.e.content.RLock()
		r := blockRange{first: 0, last: math.MaxUint64}
		if n > 0 {
			r = blockRange{first: off / bs, last: (off + n - 1) / bs}
		}
		return held{rlock: true, rslot: 1 + f.e.ranges.lock(r)}, nil
	}
	deadline := f.lockDeadline()
	if err := f.lockSerial(ctx, deadline); err != nil {
		return held{}, err
	}
	spans, count := [2]lockSpan{wholeFile}, 1
	if n > 0 {
		spans, count = [2]lockSpan{headerSpan, f.blockSpan(off, n)}, 2
	}
	return f.takeSpans(ctx, deadline, spans, count, unix.F_RDLCK, unix.F_RDLCK)
}

// takeSpans takes the internal locks on spans[:count], the first of type
// typ0, the second of type typ1, with the inode held alone (lockSerial).
// On failure it releases what it took and the inode.
func (f *File) takeSpans(ctx context.Context, deadline time.Time, spans [2]lockSpan, count int, typ0, typ1 int16) (held, error) {
	h := held{spans: spans}
	for i := range count {
		typ := typ0
		if i > 0 {
			typ = typ1
		}
		if err := f.ofdLock(ctx, deadline, typ, spans[i]); err != nil {
			f.release(h)
			return held{}, err
		}
		h.n = i + 1
	}
	return h, nil
}

// exclusiveLock takes the locks for changing the whole file (truncate,
// append, fallocate).
func (f *File) exclusiveLock(ctx context.Context) (held, error) {
	if !f.opts.SharedStorage {
		f.e.content.Lock()
		f.applyCut()
		return held{}, nil
	}
	deadline := f.lockDeadline()
	if err := f.lockSerial(ctx, deadline); err != nil {
		return held{}, err
	}
	return f.takeSpans(ctx, deadline, [2]lockSpan{wholeFile}, 1, unix.F_WRLCK, 0)
}

// writeLock takes the locks for writing the plaintext range [off, off+n),
// n > 0.
//
// Without SharedStorage, a write holds the content lock shared, reserves
// its range in the file size (extend.go) and holds its blocks exclusively,
// so that writers of disjoint blocks run in parallel, whether inside the
// file or past its end, while two writers of one block (each reading,
// merging and rewriting it) take turns. Writes that create the header or
// that would have to pad a block they do not cover hold the content lock
// exclusively, like every other size change (truncate, append, fallocate).
//
// With SharedStorage, the range needed depends on the file size, which
// only the lock makes stable: if the size changed in between so that more
// is needed, the locks are dropped and the whole file is locked instead.
func (f *File) writeLock(ctx context.Context, off, n uint64) (held, error) {
	if !f.opts.SharedStorage {
		f.e.content.RLock()
		if tok, ok := f.reserve(off, off+n); ok {
			r := blockRange{first: off / bs, last: (off + n - 1) / bs, excl: true}
			return held{rlock: true, rslot: 1 + f.e.ranges.lock(r), ext: tok}, nil
		}
		f.e.content.RUnlock()
		f.e.content.Lock()
		f.applyCut()
		return held{}, nil
	}
	deadline := f.lockDeadline()
	if err := f.lockSerial(ctx, deadline); err != nil {
		return held{}, err
	}
	span, whole := f.writeSpan(off, n)
	if !whole {
		h, err := f.takeSpans(ctx, deadline, [2]lockSpan{headerSpan, span}, 2, unix.F_RDLCK, unix.F_WRLCK)
		if err != nil {
			return held{}, err
		}
		if _, whole = f.writeSpan(off, n); !whole {
			return h, nil
		}
		f.ofdUnlock(span)
		f.ofdUnlock(headerSpan)
	}
	return f.takeSpans(ctx, deadline, [2]lockSpan{wholeFile}, 1, unix.F_WRLCK, 0)
}

// writeSpan returns the ciphertext blocks a write of [off, off+n) rewrites,
// or whole=true if it creates the header or touches the block holding the
// end of file or anything after it.
func (f *File) writeSpan(off, n uint64) (span lockSpan, whole bool) {
	cs, err := fstatSize(f.fd)
	if err != nil || cs <= contentenc.HeaderLen {
		return wholeFile, true
	}
	ps := f.ce.CipherSizeToPlainSize(cs)
	last := (off + n - 1) / bs
	if ps == 0 || last >= (ps-1)/bs {
		return wholeFile, true
	}
	return f.blockSpan(off, n), false
}

// blockSpan returns the ciphertext range of the blocks holding the
// plaintext range [off, off+n), n > 0.
func (f *File) blockSpan(off, n uint64) lockSpan {
	first, last := off/bs, (off+n-1)/bs
	start := f.ce.BlockNoToCipherOff(first)
	end := f.ce.BlockNoToCipherOff(last + 1)
	if end > maxLockOff || end < start {
		// Far beyond any real file (a read past the end): lock from
		// the start, capped, to the end.
		return lockSpan{min(start, maxLockOff), 0}
	}
	return lockSpan{start, end - start}
}

// maxLockOff is the largest ciphertext offset whose lock offset fits into
// an int64.
const maxLockOff = math.MaxInt64 - LockBase

// ClampAppLock limits an application's lock range (as in struct flock:
// len 0 = to the end of the file and beyond) to offsets below LockBase,
// where SharedStorage's own locks cannot meet it. A range starting at or
// beyond LockBase fails with EINVAL.
func ClampAppLock(start, length int64) (int64, error) {
	if start < 0 || start >= LockBase {
		return 0, syscall.EINVAL
	}
	if length == 0 || length > LockBase-start {
		return LockBase - start, nil
	}
	return length, nil
}

// UnclampAppLock is the inverse of ClampAppLock for a range reported by
// F_OFD_GETLK: a lock reaching LockBase is reported as reaching to the end
// of the file.
func UnclampAppLock(start, length int64) int64 {
	if length > 0 && start+length == LockBase {
		return 0
	}
	return length
}

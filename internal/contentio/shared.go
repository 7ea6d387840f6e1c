package contentio

import (
	"math"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// With Options.SharedStorage, several mounts (on one machine or on several
// machines sharing a network filesystem) may access one backing file at
// once. The in-process content lock only orders the Files of one Table,
// so every operation also takes open-file-description byte-range locks
// (F_OFD_SETLKW) on the backing file, which the kernel (and NFSv4, SMB,
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

// ofdLock sets (typ F_RDLCK/F_WRLCK, waiting) or releases (F_UNLCK) the
// internal lock on span. A backing filesystem without lock support is
// remembered and not asked again; the operation then runs unlocked.
func (f *File) ofdLock(typ int16, span lockSpan) {
	if f.e.lockUnsupported.Load() {
		return
	}
	flk := unix.Flock_t{Type: typ, Whence: unix.SEEK_SET, Start: int64(LockBase + span.start), Len: int64(span.len)}
	// F_OFD_SETLKW is restarted after signals (SA_RESTART); Retry covers
	// the rest.
	err := syscallcompat.Retry(func() error { return unix.FcntlFlock(uintptr(f.fd), unix.F_OFD_SETLKW, &flk) })
	if err != nil && typ != unix.F_UNLCK && !f.e.lockUnsupported.Swap(true) {
		f.log.Warn("backing filesystem refuses byte-range locks; -sharedstorage cannot protect this file against concurrent mounts",
			"ino", f.ino, "err", err)
	}
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
		f.ofdLock(unix.F_UNLCK, h.spans[i])
	}
	if h.rslot > 0 {
		f.e.ranges.unlock(h.rslot - 1)
	}
	if h.rlock {
		f.e.content.RUnlock()
	} else {
		f.e.content.Unlock()
	}
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
func (f *File) sharedLock(off, n uint64) held {
	if !f.opts.SharedStorage {
		f.e.content.RLock()
		r := blockRange{first: 0, last: math.MaxUint64}
		if n > 0 {
			r = blockRange{first: off / bs, last: (off + n - 1) / bs}
		}
		return held{rlock: true, rslot: 1 + f.e.ranges.lock(r)}
	}
	f.e.content.Lock()
	h := held{spans: [2]lockSpan{wholeFile}, n: 1}
	if n > 0 {
		h = held{spans: [2]lockSpan{headerSpan, f.blockSpan(off, n)}, n: 2}
	}
	for i := range h.n {
		f.ofdLock(unix.F_RDLCK, h.spans[i])
	}
	return h
}

// exclusiveLock takes the locks for changing the whole file (truncate,
// append, fallocate).
func (f *File) exclusiveLock() held {
	f.e.content.Lock()
	if !f.opts.SharedStorage {
		return held{}
	}
	f.ofdLock(unix.F_WRLCK, wholeFile)
	return held{spans: [2]lockSpan{wholeFile}, n: 1}
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
func (f *File) writeLock(off, n uint64) held {
	if !f.opts.SharedStorage {
		f.e.content.RLock()
		if tok, ok := f.reserve(off, off+n); ok {
			r := blockRange{first: off / bs, last: (off + n - 1) / bs, excl: true}
			return held{rlock: true, rslot: 1 + f.e.ranges.lock(r), ext: tok}
		}
		f.e.content.RUnlock()
		f.e.content.Lock()
		return held{}
	}
	f.e.content.Lock()
	span, whole := f.writeSpan(off, n)
	if !whole {
		f.ofdLock(unix.F_RDLCK, headerSpan)
		f.ofdLock(unix.F_WRLCK, span)
		if _, whole = f.writeSpan(off, n); !whole {
			return held{spans: [2]lockSpan{headerSpan, span}, n: 2}
		}
		f.ofdLock(unix.F_UNLCK, span)
		f.ofdLock(unix.F_UNLCK, headerSpan)
	}
	f.ofdLock(unix.F_WRLCK, wholeFile)
	return held{spans: [2]lockSpan{wholeFile}, n: 1}
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

package contentio

import (
	"sync"
	"sync/atomic"

	"gocryptfs/internal/contentenc"
)

// Table is the table of open backing inodes. All Files of one inode (opened
// several times, or through hard links) share one entry, keyed by the
// device and inode number of the backing file, so that they share the
// content lock and agree on one file ID. One Table serves one mount; it is
// safe for concurrent use. The zero value is not usable; call NewTable.
//
// Every access to the contents of a backing file whose inode is open must
// go through Files of the same Table: the cached file ID and the locking
// are only valid under that rule. The locks of an entry, and the order in
// which they are taken, are described in docs/internals.md.
type Table struct {
	mu      sync.Mutex
	entries map[inodeKey]*entry
	// reported remembers the file versions whose corruption was already
	// logged, beyond the lifetime of their entries, so that a program that
	// opens, reads and closes a damaged file in a loop causes one log line
	// rather than one per open.
	reported map[versionKey]struct{}
}

// versionKey identifies one state of a backing file: the same inode with a
// new ctime has been written (or had its attributes changed) since.
type versionKey struct {
	inodeKey
	ctimeSec, ctimeNsec int64
}

// maxReported bounds Table.reported; when full it is emptied, which at
// worst repeats a log line.
const maxReported = 10000

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{entries: make(map[inodeKey]*entry), reported: make(map[versionKey]struct{})}
}

// firstReport records k and reports whether it was not recorded before.
func (t *Table) firstReport(k versionKey) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.reported[k]; ok {
		return false
	}
	if len(t.reported) >= maxReported {
		clear(t.reported)
	}
	t.reported[k] = struct{}{}
	return true
}

// Len returns the number of inodes that currently have open Files, for
// tests and diagnostics.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

type inodeKey struct {
	dev, ino uint64
}

// entry is the state shared by all Files of one backing inode.
type entry struct {
	key  inodeKey
	refs int // guarded by Table.mu

	// content serializes size changes against everything else: ReadAt,
	// Size, SeekData/SeekHole, Verify and writes inside the file share
	// it, as do writes (extend.go); Truncate, Allocate, Append and the
	// writes that reserve refuses (the file has no header yet, or a
	// partial block is in the way: extend.go) hold it exclusively.
	content sync.RWMutex
	// serial replaces content with SharedStorage, where every operation
	// holds the inode alone (shared.go): a one-slot semaphore, so that a
	// request queued behind one that waits for the byte-range locks of
	// others can give up when it is interrupted or times out. nil
	// without SharedStorage.
	serial chan struct{}
	// ranges orders the holders of content shared by block: readers share
	// their blocks, writers inside the file hold theirs exclusively (see
	// File.writeLock and File.sharedLock).
	ranges rangeLock
	// ext is the size reservation of the writers holding content shared.
	ext extension

	// idMu guards id and idOK. Only holders of content exclusively write
	// a header and cache its ID; readers and reserved writers (holding
	// content shared) may fill an empty cache from disk, and anyone may
	// empty it (Table.acquire without content, Verify with it shared),
	// since every user rereads the header when it is empty. Hence a mutex
	// of its own (docs/internals.md, section 6).
	idMu sync.Mutex
	id   [contentenc.FileIDLen]byte
	idOK bool

	// loggedCorrupt and warnedSize make corruption reports and size
	// warnings appear once per inode instead of once per read or stat
	// (corruption also only once per file version and Table, see
	// Table.reported).
	loggedCorrupt atomic.Bool
	warnedSize    atomic.Bool
	// preallocUnsupported remembers that the backing filesystem rejected
	// fallocate, so that later writes do not retry it.
	preallocUnsupported atomic.Bool
	// lockUnsupported remembers that the backing filesystem rejected
	// byte-range locks (SharedStorage).
	lockUnsupported atomic.Bool
	// warnedLock makes a SharedStorage lock wait that timed out appear
	// once per inode in the log.
	warnedLock atomic.Bool
}

// acquire returns the entry for key with its reference count raised.
// shared: Options.SharedStorage, which all Files of t have in common.
func (t *Table) acquire(key inodeKey, shared bool) *entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[key]
	if e == nil {
		e = &entry{key: key}
		if shared {
			e.serial = make(chan struct{}, 1)
		}
		t.entries[key] = e
	} else {
		// The inode is still open here, maybe only because the kernel
		// has not yet sent the RELEASE of a closed handle (asynchronous,
		// and late often over io_uring). An open is when a program may
		// expect to see what another writer (a second mount, a tool on
		// CIPHERDIR) left there meanwhile: the cached file ID is
		// re-read from the header at the next access instead of
		// trusted, which costs one pread per open of an open inode.
		// Forgetting it is safe at any time: every user of the cache
		// reads the header from disk when it is empty, and the only
		// writer of a new header holds content exclusively and caches
		// the ID after writing it.
		e.setID([contentenc.FileIDLen]byte{}, false)
	}
	e.refs++
	return e
}

// release drops one reference and forgets the entry when it was the last,
// so that a new file that reuses the inode number starts fresh.
func (t *Table) release(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(t.entries, e.key)
	}
}

// cachedID returns the cached file ID, if any.
func (e *entry) cachedID() (id [contentenc.FileIDLen]byte, ok bool) {
	e.idMu.Lock()
	id, ok = e.id, e.idOK
	e.idMu.Unlock()
	return id, ok
}

// setID caches id (ok=true) or forgets the cached one (ok=false).
func (e *entry) setID(id [contentenc.FileIDLen]byte, ok bool) {
	e.idMu.Lock()
	e.id, e.idOK = id, ok
	e.idMu.Unlock()
}

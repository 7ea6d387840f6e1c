package fusefrontend

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// mtimeKeeper keeps a regular file's backing modification time equal to
// the kernel's under the writeback cache.
//
// With the writeback cache the kernel owns a cached file's mtime: it sets
// it at write(2) time and later sends it in a SETATTR (when it writes the
// inode back: on close, fsync, eviction). The data reaches the filesystem
// separately, as WRITE requests from the page cache, which the kernel may
// still be sending when (or after) its SETATTR with the mtime arrives, so
// each pwrite of the backing file would move the backing mtime past the
// kernel's. The view stays right while the inode is cached, but the next
// mount, another implementation or a backup tool would see a different
// mtime than the one shown before. So page-cache WRITEs put back the
// mtime last set by the kernel (or, before any, the one they found), and
// a SETATTR that sets times excludes them while it runs. Only the last of
// the page-cache writes in flight on an inode puts it back: the kernel
// sends write-back in parallel requests, and one futimens after the last
// pwrite leaves the same mtime as one after each.
//
// Writes on O_DIRECT handles are not from the page cache: the kernel does
// not set their mtime, it asks the filesystem afterwards. They keep the
// mtime their pwrite gave and make the keeper read it afresh next time.
//
// mu is taken before any lock of contentio, never after: see
// docs/internals.md (sections 2 and 7).
type mtimeKeeper struct {
	mu    sync.RWMutex
	ts    unix.Timespec
	valid bool
	// writers counts the page-cache writes between hold and done; dirty
	// is set by those that wrote something and cleared by the one that
	// restores the mtime after them.
	writers atomic.Int32
	dirty   atomic.Bool
}

// hold returns the mtime a page-cache write on fd must leave behind, with
// m.mu read-locked and the write counted; the caller calls done once its
// write is over.
func (m *mtimeKeeper) hold(fd int) (unix.Timespec, error) {
	for {
		m.mu.RLock()
		if m.valid {
			m.writers.Add(1)
			return m.ts, nil
		}
		m.mu.RUnlock()
		m.mu.Lock()
		if !m.valid {
			var st unix.Stat_t
			if err := syscallcompat.Fstat(fd, &st); err != nil {
				m.mu.Unlock()
				return unix.Timespec{}, err
			}
			m.ts, m.valid = st.Mtim, true
		}
		m.mu.Unlock()
	}
}

// done ends a page-cache write started with hold, which wrote something
// if wrote is set. The last write in flight puts back ts if any of them
// wrote: each sets dirty after its pwrite and before leaving, and the one
// that brings the count to 0 takes dirty, so a restore follows every
// pwrite (a write that starts meanwhile restores again when it ends).
func (m *mtimeKeeper) done(fd int, ts unix.Timespec, wrote bool) error {
	defer m.mu.RUnlock()
	if wrote {
		m.dirty.Store(true)
	}
	if m.writers.Add(-1) == 0 && m.dirty.Swap(false) {
		return restoreMtime(fd, ts)
	}
	return nil
}

// restore sets fd's mtime back to ts, leaving its atime alone.
func restoreMtime(fd int, ts unix.Timespec) error {
	return syscallcompat.FutimesNano(fd, [2]unix.Timespec{{Nsec: syscallcompat.UtimeOmit}, ts})
}

// forget makes the next page-cache write read the backing mtime again
// (after a change the kernel did not time itself).
func (m *mtimeKeeper) forget() {
	m.mu.Lock()
	m.valid = false
	m.mu.Unlock()
}

// seed records ts, the backing mtime just read by whoever made the file,
// as what the first page-cache write must leave, so that it need not read
// it again; a value already known is kept.
func (m *mtimeKeeper) seed(ts unix.Timespec) {
	m.mu.Lock()
	if !m.valid {
		m.ts, m.valid = ts, true
	}
	m.mu.Unlock()
}

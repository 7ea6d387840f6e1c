package fusefrontend

import (
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// With the writeback cache (exclusive access to CIPHERDIR), an open keeps
// the kernel's page cache of the file (FOPEN_KEEP_CACHE) when the backing
// file is unchanged since the last handle on it was released: same inode,
// size, mtime and ctime. Every change through this mount goes through the
// page cache or changes ctime (truncate, setattr), and a change by anyone
// else changes ctime, which cannot be set back; either way the next open
// drops the cache as without this. Each Node holds at most one stamp.
//
// Access times: reads that the page cache answers never reach this
// process, and the kernel does not update the atime of FUSE files itself,
// so a read-only or read-write open also drops the cache when the access
// time policy says the next read must update the atime (atimeDue: under
// relatime after a write, as ext4 does). The read then reaches the backing
// file, whose filesystem updates its atime; after that the cache is kept
// again until the next write.

// cacheStamp is what identifies a backing file's content state.
type cacheStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func stampOf(st *unix.Stat_t) cacheStamp {
	return cacheStamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// keepCache reports whether an open of n whose backing file has the stat
// st (taken at the open) may keep the kernel's page cache; readable says
// the open allows reading.
func (n *Node) keepCache(st *unix.Stat_t, readable bool) bool {
	if !n.rn.args.Writeback {
		return false
	}
	if readable && n.rn.atimeDue(st, time.Now()) {
		return false
	}
	s := n.st.Load()
	if s == nil {
		return false
	}
	old := s.stamp.Load()
	if old == nil {
		return false
	}
	return *old == stampOf(st)
}

// rememberStamp records the backing file's state when a handle is
// released: what the kernel's page cache reflects at that point.
func (n *Node) rememberStamp(fd int) {
	if !n.rn.args.Writeback {
		return
	}
	var st unix.Stat_t
	if syscallcompat.Fstat(fd, &st) != nil {
		n.state().stamp.Store(nil)
		return
	}
	s := stampOf(&st)
	n.state().stamp.Store(&s)
}

package fusefrontend

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// openWriteOnly opens a regular file that we own but may not read (mode
// 0200 and the like) with bflags (O_RDWR: writes are read-modify-write):
// owner-read permission is added for the duration of the open and removed
// again, as the reference does. firstErr is the EACCES of a plain open
// attempt and is returned when the trick does not apply.
//
// The entry is pinned with O_PATH, so the mode is changed and the file
// opened on exactly that inode (through /proc/self/fd), never on whatever
// the name points to by then. Concurrent opens of one inode are
// serialized: otherwise one opener's restore of the mode can fall between
// another's chmod and open (a spurious EACCES), or an opener can take the
// temporarily added bit for the file's real mode and restore that.
func (rn *RootNode) openWriteOnly(dirfd int, cName string, bflags int, firstErr error) (int, error) {
	pfd, err := syscallcompat.OpenPathAt(dirfd, cName)
	if err != nil {
		return -1, firstErr
	}
	defer syscallcompat.Close(pfd)
	var st unix.Stat_t
	if syscallcompat.Fstat(pfd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return -1, firstErr
	}
	unlock := rn.chmodLocks.lock(inoKey{uint64(st.Dev), st.Ino})
	defer unlock()
	reopen := func() (int, error) { return syscallcompat.ReopenPathFd(pfd, bflags) }
	// Under the lock the mode is the file's own: no opener of ours has
	// changed it. It may have been changed since the first attempt.
	if err := syscallcompat.Fstat(pfd, &st); err != nil {
		return -1, err
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o400 != 0 || st.Mode&0o200 == 0 {
		return reopen()
	}
	orig := uint32(st.Mode & 0o7777)
	if err := syscallcompat.ChmodPathFd(pfd, orig|0o400); err != nil {
		return -1, firstErr
	}
	fd, err := reopen()
	if err != nil {
		if err2 := syscallcompat.ChmodPathFd(pfd, orig); err2 != nil {
			rn.log.Warn("open: could not restore the mode of a write-only file", "name", cName, "err", err2)
		}
		return -1, err
	}
	if err := syscallcompat.Fchmod(fd, orig); err != nil {
		syscallcompat.Close(fd)
		return -1, errors.Join(err, syscallcompat.ChmodPathFd(pfd, orig))
	}
	return fd, nil
}

// inoKey identifies a backing inode.
type inoKey struct{ dev, ino uint64 }

// inodeLocks hands out one mutex per backing inode, created on demand and
// dropped when nobody holds or waits for it.
type inodeLocks struct {
	mu sync.Mutex
	m  map[inoKey]*inodeLock
}

type inodeLock struct {
	mu   sync.Mutex
	refs int // holders and waiters; guarded by inodeLocks.mu
}

// lock locks the mutex of inode k and returns the function that unlocks it.
func (l *inodeLocks) lock(k inoKey) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[inoKey]*inodeLock)
	}
	il := l.m[k]
	if il == nil {
		il = &inodeLock{}
		l.m[k] = il
	}
	il.refs++
	l.mu.Unlock()
	il.mu.Lock()
	return func() {
		il.mu.Unlock()
		l.mu.Lock()
		il.refs--
		if il.refs == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}

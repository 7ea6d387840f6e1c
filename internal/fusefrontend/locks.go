package fusefrontend

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentio"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// Application locks (fcntl F_SETLK, F_SETLKW, F_GETLK, F_OFD_* and flock).
//
// By default the mount does not offer lock support to the kernel
// (mountopts.ForwardLocks), so the kernel keeps fcntl and flock locks
// itself, with its exact POSIX semantics, and none of the code below runs.
// Those locks are seen on this machine, through this mount only.
//
// With -sharedstorage (Args.ForwardLocks) the kernel forwards them, so that
// other mounts of CIPHERDIR, on this or other machines, and programs that
// lock the ciphertext files directly see them. They are then taken on the
// backing file with the POSIX rules the kernel would apply:
//
//   - fcntl locks belong to the lock owner of the request (the kernel's
//     lock_owner: one per process, or per open file for F_OFD_* locks).
//     Each owner gets an open file description of its own on the backing
//     file (ownerLock.fd, a reopen of the handle's backing fd), and the
//     locks are open-file-description locks on it: locks of one owner
//     merge and split and never conflict with each other, whichever of its
//     descriptors they were taken through, while other owners, other
//     mounts and other programs conflict as with the kernel's own locks.
//   - A close(2) by the owner of any descriptor of the file releases all
//     its locks on the file: the kernel sends FLUSH with the owner
//     (fuse_flush), and fuseserve hands it to CloseLockOwner. The owner's
//     descriptor is closed with it. RELEASE of a handle drops the locks
//     taken through it that no FLUSH dropped (F_OFD_* locks, whose owner
//     is the open file itself).
//   - flock locks belong to the open file: they are flock(2) locks on the
//     handle's own backing fd and go when the handle is released.
//   - A waiting request (F_SETLKW, flock without LOCK_NB) never blocks a
//     thread: it tries without waiting and, on a conflict, sleeps in its
//     goroutine until a local unlock wakes it or a poll interval passes
//     (syscallcompat.WaitLock, shared with the internal locks of
//     contentio), and returns EINTR as soon as the kernel interrupts the
//     request (a signal or SIGKILL of the waiter: FUSE_INTERRUPT cancels
//     the request's context). However many requests wait, they cost
//     goroutines, not OS threads. A lock released by another mount or
//     machine is noticed within syscallcompat.MaxLockPoll.
//
// Application locks are limited to offsets below contentio.LockBase, where
// the internal locks of -sharedstorage (which live on the handles' fds at
// LockBase and above) cannot meet them (clampLock).
//
// Known differences from local locks: no deadlock detection (EDEADLK) for
// forwarded locks; F_GETLK reports no pid (l_pid 0); a waiter is not
// queued, so a lock taken and released in quick succession by others can
// keep it waiting.
//
// How these locks sit beside the internal ones of contentio:
// docs/internals.md (sections 8 and 10.3).

// lockTable holds the lock owners of a mount that forwards locks. All
// methods are safe for concurrent use.
type lockTable struct {
	mu sync.Mutex
	// owners maps a node (its inode number, the FUSE node ID) to its lock
	// owners.
	owners map[uint64]map[uint64]*ownerLock
	// released is closed (and dropped) when a lock of this mount was
	// released, to wake the waiters; nil while nobody waits.
	released chan struct{}
	// polls is the mount's bound on repeated lock attempts, shared with
	// the content locks (RootNode.contentOptions).
	polls *syscallcompat.LockPolls
}

// ownerLock is the backing open file description of one lock owner on one
// file.
type ownerLock struct {
	// mu orders lock operations on fd against the release of all of them
	// (empty must describe fd's locks). Taken after lockTable.mu, never
	// before it.
	mu sync.Mutex
	fd int
	// users counts requests using fd; fd is closed only when it is zero
	// and the owner holds nothing (empty). Guarded by lockTable.mu.
	users int
	// empty: fd holds no lock (it was never granted one, or everything
	// was released since). Guarded by mu.
	empty bool
	// handles are the handles the owner took locks through. Guarded by
	// lockTable.mu.
	handles []*file
}

// pin returns the owner's entry with users incremented. With create, an
// owner without one gets a new descriptor opened on f's backing file;
// without, nil is returned for it. The caller calls unpin.
func (t *lockTable) pin(ino, owner uint64, f *file, create bool) (*ownerLock, error) {
	t.mu.Lock()
	o := t.owners[ino][owner]
	if o != nil || !create {
		if o != nil {
			o.users++
			t.addHandle(o, f)
		}
		t.mu.Unlock()
		return o, nil
	}
	t.mu.Unlock()
	// Opened outside t.mu: on a network filesystem an open is a round
	// trip.
	fd, err := reopenForLocks(f.cf.Fd())
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.owners[ino][owner]; o != nil {
		// Another request of the owner was faster.
		syscallcompat.Close(fd)
		o.users++
		t.addHandle(o, f)
		return o, nil
	}
	if t.owners == nil {
		t.owners = make(map[uint64]map[uint64]*ownerLock)
	}
	m := t.owners[ino]
	if m == nil {
		m = make(map[uint64]*ownerLock)
		t.owners[ino] = m
	}
	o = &ownerLock{fd: fd, users: 1, empty: true}
	t.addHandle(o, f)
	m[owner] = o
	return o, nil
}

// addHandle records that o's owner used f. Called with t.mu held.
func (t *lockTable) addHandle(o *ownerLock, f *file) {
	if f == nil {
		return
	}
	for _, h := range o.handles {
		if h == f {
			return
		}
	}
	o.handles = append(o.handles, f)
}

// unpin ends a use of o; an owner that holds nothing any more and is not
// in use loses its entry and descriptor.
func (t *lockTable) unpin(ino, owner uint64, o *ownerLock) {
	t.mu.Lock()
	o.users--
	o.mu.Lock()
	drop := o.users == 0 && o.empty
	o.mu.Unlock()
	if drop {
		t.remove(ino, owner)
	}
	t.mu.Unlock()
	if drop {
		syscallcompat.Close(o.fd)
	}
}

// remove deletes the entry of owner on ino. Called with t.mu held.
func (t *lockTable) remove(ino, owner uint64) {
	m := t.owners[ino]
	delete(m, owner)
	if len(m) == 0 {
		delete(t.owners, ino)
	}
}

// releaseAll drops every lock of o.
func (o *ownerLock) releaseAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.empty {
		return
	}
	// The whole range: o.fd carries application locks only.
	flk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: unix.SEEK_SET}
	if ofdSetlk(o.fd, &flk) == nil {
		o.empty = true
	}
}

// closeOwner releases all locks of owner on ino (a close by the owner:
// FLUSH).
func (t *lockTable) closeOwner(ino, owner uint64) {
	o, _ := t.pin(ino, owner, nil, false)
	if o == nil {
		return
	}
	o.releaseAll()
	t.unpin(ino, owner, o)
	t.wake()
}

// handleReleased drops the locks of the owners whose only handle on ino
// was f (RELEASE of f). A POSIX owner that used f has closed it, so its
// FLUSH already released its locks; what is left here are the F_OFD_*
// locks of f itself.
func (t *lockTable) handleReleased(ino uint64, f *file) {
	type ownerRef struct {
		owner uint64
		o     *ownerLock
	}
	var orphans []ownerRef
	t.mu.Lock()
	for owner, o := range t.owners[ino] {
		for i, h := range o.handles {
			if h == f {
				o.handles = append(o.handles[:i], o.handles[i+1:]...)
				if len(o.handles) == 0 {
					o.users++
					orphans = append(orphans, ownerRef{owner, o})
				}
				break
			}
		}
	}
	t.mu.Unlock()
	for _, r := range orphans {
		r.o.releaseAll()
		t.unpin(ino, r.owner, r.o)
	}
	// Also flock locks, which go with f's fd.
	t.wake()
}

// wake wakes the waiters after a local release.
func (t *lockTable) wake() {
	t.mu.Lock()
	if t.released != nil {
		close(t.released)
		t.released = nil
	}
	t.mu.Unlock()
}

// wait runs try until it succeeds or fails with something else than a
// conflict. Without block the first outcome is returned. A blocking wait
// sleeps in the request's goroutine until a local release (wake) or a poll
// interval passes, and ends with EINTR when ctx is cancelled (the kernel
// interrupted the request); see syscallcompat.WaitLock. It has no
// deadline: F_SETLKW waits as long as the holder wants, as on a local
// filesystem.
func (t *lockTable) wait(ctx context.Context, block bool, try func() error) error {
	if !block {
		return try()
	}
	return syscallcompat.WaitLock(ctx, time.Time{}, t.polls, t.wakeChan, try)
}

// wakeChan returns the channel that the next local release closes.
func (t *lockTable) wakeChan() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released == nil {
		t.released = make(chan struct{})
	}
	return t.released
}

// reopenForLocks opens a new open file description of the file open as fd,
// for an owner's locks: read-write, so that it can carry read and write
// locks, or, where the daemon may not open it so, with fd's access mode.
// It is never used for I/O. The /proc link names exactly fd's inode.
func reopenForLocks(fd int) (int, error) {
	open := func(flags int) (int, error) {
		return syscallcompat.ReopenPathFd(fd, flags|unix.O_NOCTTY)
	}
	nfd, err := open(unix.O_RDWR)
	if err == nil {
		return nfd, nil
	}
	fl, err2 := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err2 != nil || fl&unix.O_ACCMODE == unix.O_RDWR {
		return -1, err
	}
	return open(fl & unix.O_ACCMODE)
}

// CloseLockOwner releases the forwarded fcntl locks that owner holds on
// the node with ID ino. fuseserve calls it for every FLUSH, that is every
// close(2) of a descriptor of the file, with the closing process as owner:
// POSIX drops all of a process's locks on a file when it closes any of
// its descriptors of it. A no-op where locks are not forwarded.
func (rn *RootNode) CloseLockOwner(ino, owner uint64) {
	if !rn.args.ForwardLocks {
		return
	}
	rn.locks.closeOwner(ino, owner)
}

var _ = (fs.NodeGetlker)((*Node)(nil))

// Getlk tests for a lock that conflicts with lk for owner.
func (n *Node) Getlk(ctx context.Context, fh fs.FileHandle, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Getlk", &errno)
	rn.enter("Getlk")
	f, ok := fh.(*file)
	if !ok {
		return syscall.EBADF
	}
	var flk syscall.Flock_t
	lk.ToFlockT(&flk)
	if err := clampLock(&flk); err != nil {
		return n.toErrno("Getlk", err)
	}
	// The owner's own locks never conflict: ask through its descriptor.
	// An owner without one holds nothing, and the handle's fd carries no
	// application locks.
	ino := n.StableAttr().Ino
	fd := f.cf.Fd()
	o, _ := rn.locks.pin(ino, owner, nil, false)
	if o != nil {
		defer rn.locks.unpin(ino, owner, o)
		fd = o.fd
	}
	err := ofdGetlk(fd, &flk)
	if err != nil {
		return n.toErrno("Getlk", err)
	}
	if flk.Type != syscall.F_UNLCK {
		flk.Len = contentio.UnclampAppLock(flk.Start, flk.Len)
		// An open-file-description lock has no pid (-1); 0 is what the
		// kernel reports for a lock of no process it can name.
		flk.Pid = 0
	}
	out.FromFlockT(&flk)
	return 0
}

var _ = (fs.NodeSetlker)((*Node)(nil))

// Setlk takes or releases a lock without waiting.
func (n *Node) Setlk(ctx context.Context, fh fs.FileHandle, owner uint64, lk *fuse.FileLock, flags uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Setlk", &errno)
	rn.enter("Setlk")
	return n.toErrno("Setlk", n.setLock(ctx, fh, owner, lk, flags, false))
}

var _ = (fs.NodeSetlkwer)((*Node)(nil))

// Setlkw takes a lock, waiting for conflicting ones to go away or the
// request to be interrupted.
func (n *Node) Setlkw(ctx context.Context, fh fs.FileHandle, owner uint64, lk *fuse.FileLock, flags uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Setlkw", &errno)
	rn.enter("Setlkw")
	return n.toErrno("Setlkw", n.setLock(ctx, fh, owner, lk, flags, true))
}

func (n *Node) setLock(ctx context.Context, fh fs.FileHandle, owner uint64, lk *fuse.FileLock, flags uint32, block bool) error {
	rn := n.rn
	f, ok := fh.(*file)
	if !ok {
		return syscall.EBADF
	}
	t := &rn.locks
	if flags&fuse.FUSE_LK_FLOCK != 0 {
		// flock: the open file owns it, and the handle is the open file.
		fd := f.cf.Fd()
		var op int
		switch lk.Typ {
		case syscall.F_RDLCK:
			op = syscall.LOCK_SH
		case syscall.F_WRLCK:
			op = syscall.LOCK_EX
		case syscall.F_UNLCK:
			err := syscallcompat.Retry(func() error { return syscall.Flock(fd, syscall.LOCK_UN) })
			t.wake()
			return err
		default:
			return syscall.EINVAL
		}
		return t.wait(ctx, block, func() error {
			return syscallcompat.Retry(func() error { return syscall.Flock(fd, op|syscall.LOCK_NB) })
		})
	}
	var flk syscall.Flock_t
	lk.ToFlockT(&flk)
	if err := clampLock(&flk); err != nil {
		return err
	}
	ino := n.StableAttr().Ino
	unlock := flk.Type == syscall.F_UNLCK
	o, err := t.pin(ino, owner, f, !unlock)
	if err != nil || o == nil {
		return err // an owner without a descriptor holds nothing to unlock
	}
	defer t.unpin(ino, owner, o)
	try := func() error {
		o.mu.Lock()
		defer o.mu.Unlock()
		err := ofdSetlk(o.fd, &flk)
		if err == nil {
			if !unlock {
				o.empty = false
			} else if flk.Start == 0 && flk.Len == contentio.LockBase {
				o.empty = true // everything there can be was released
			}
		}
		return err
	}
	if unlock {
		err := try()
		t.wake()
		return err
	}
	return t.wait(ctx, block, try)
}

// clampLock keeps a forwarded application lock below contentio.LockBase,
// where -sharedstorage takes its own locks on the backing file (see
// contentio/shared.go). Done in every mode, so that mounts and programs
// agree on the ranges.
func clampLock(flk *syscall.Flock_t) error {
	l, err := contentio.ClampAppLock(flk.Start, flk.Len)
	if err != nil {
		return err
	}
	flk.Len = l
	return nil
}

package fuseserve

import (
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Interrupts and lock waits (Options.FatalInterruptsOnly).
//
// The kernel sends FUSE_INTERRUPT for a request whose caller got any
// signal, and go-fuse then closes the request's cancel channel. A request
// that waits (with -sharedstorage: for another mount's byte-range locks on
// the ciphertext file) would give up with EINTR. read(2) and write(2) of a
// regular file never fail with EINTR on a local filesystem, SA_RESTART
// does not restart them after a FUSE EINTR either, and C programs with
// signal handlers (SIGCHLD, SIGWINCH, timers) do not expect it: a
// caught signal would turn into a failed write.
//
// Giving up is needed only for a caller that is dying: once a request has
// reached the daemon, the kernel lets even a SIGKILLed caller leave only
// when the reply comes (fs/fuse/dev.c, request_wait_answer), so it would
// stay in D state until the lock is free or the wait times out. patient
// hands the filesystem a cancel channel that closes once the request was
// interrupted and its caller is dying (a fatal signal pending, or gone),
// checked when the interrupt comes and then every dyingPoll, since a
// SIGKILL after another signal brings no second FUSE_INTERRUPT. The end
// of the connection (umount -f, an abort through fusectl) cancels every
// request too, while their callers live on (they got ENOTCONN): connAlive
// tells that apart, so that the daemon can exit at once. Forwarded
// lock waits (SETLKW) keep the plain channel: fcntl(F_SETLKW) fails with
// EINTR on any caught signal on a local filesystem too.

// dyingPoll is how often an interrupted request whose caller was not
// dying looks again.
const dyingPoll = 100 * time.Millisecond

// nop is the end function of a request that needs no watcher.
func nop() {}

// patient returns the cancel channel to hand to the filesystem for a
// request of the caller with thread ID pid, and a function the wrapper
// calls when the request has been answered. Without
// Options.FatalInterruptsOnly, or for a caller the daemon cannot see
// (pid 0: another PID namespace), it is cancel itself.
func (w *rawFS) patient(cancel <-chan struct{}, pid uint32) (<-chan struct{}, func()) {
	if !w.fatalOnly || pid == 0 || cancel == nil {
		return cancel, nop
	}
	dying := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-cancel:
		}
		t := time.NewTicker(dyingPoll)
		defer t.Stop()
		for !callerDying(pid) && w.connAlive() {
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
		close(dying)
	}()
	return dying, func() { close(done) }
}

// connAlive reports whether the mount is still served: its mount point
// still shows the device it had when mounted and answers (an aborted
// connection answers ENOTCONN; after umount -f the path shows what was
// below). Unknown (a /dev/fd/N mount point, or before the mount was
// seen) counts as alive.
func (w *rawFS) connAlive() bool {
	dev := w.mountDev.Load()
	if dev == 0 {
		return true
	}
	st, err := statDev(w.mountPoint)
	if err != nil {
		return !errors.Is(err, syscall.ENOTCONN)
	}
	return st == dev
}

// watchConn records the device of the mount on dir for connAlive.
func (w *rawFS) watchConn(dir string) {
	if !w.fatalOnly || magicFD(dir) >= 0 {
		return
	}
	if dev, err := statDev(dir); err == nil {
		w.mountPoint = dir
		w.mountDev.Store(dev)
	}
}

// statDev is the device number of path (stat(2), following a symlink: a
// mount point given by the user, never inside CIPHERDIR).
func statDev(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil
}

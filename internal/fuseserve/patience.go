package fuseserve

import "time"

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
// SIGKILL after another signal brings no second FUSE_INTERRUPT. Forwarded
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
		for !callerDying(pid) {
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

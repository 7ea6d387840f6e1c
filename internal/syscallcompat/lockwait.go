package syscallcompat

import (
	"context"
	"syscall"
	"time"
)

// Waiting for a byte-range or flock lock on behalf of a FUSE request.
//
// A blocking F_SETLKW, F_OFD_SETLKW or flock(2) would pin one OS thread
// per waiter for as long as the holder wants (whoever can write CIPHERDIR
// can hold a lock on a ciphertext file forever) and could not be
// abandoned when the kernel interrupts the request: the waiting process
// would sit in D state, unkillable. WaitLock instead tries without
// waiting and sleeps in the calling goroutine between attempts.

const (
	// MinLockPoll and MaxLockPoll bound the interval at which WaitLock
	// retries while nothing wakes it: it starts at MinLockPoll and
	// doubles up to MaxLockPoll, so a lock released by another process,
	// mount or machine is noticed within MaxLockPoll.
	MinLockPoll = time.Millisecond
	MaxLockPoll = 50 * time.Millisecond
)

// LockTimedOut (ETIMEDOUT) is what WaitLock returns when its deadline
// passed while the lock was still held by someone else. Callers turn it
// into the error their operation reports.
const LockTimedOut = syscall.ETIMEDOUT

// IsLockConflict reports whether a non-blocking lock attempt (F_SETLK,
// F_OFD_SETLK, flock with LOCK_NB) failed because someone holds a
// conflicting lock.
func IsLockConflict(err error) bool {
	return err == syscall.EAGAIN || err == syscall.EACCES
}

// WaitLock calls try, a non-blocking lock attempt, until it returns
// anything but a conflict (IsLockConflict), and returns that. Between
// attempts it sleeps in the calling goroutine, holding no OS thread, until
// the channel wake returns is closed (wake may be nil: the caller's own
// lock holders never announce a release) or a poll interval passes. wake
// is called before each attempt, so that a release announced after a
// failed attempt is not missed.
//
// It returns Interrupted as soon as ctx is cancelled (go-fuse cancels a
// request's context when the kernel sends FUSE_INTERRUPT, which it does
// when the waiting process gets a signal, SIGKILL included), and
// LockTimedOut once deadline has passed (the zero time: no deadline).
//
// The first attempt costs no allocation; only a wait does (a timer).
// Safe for concurrent use as far as try and wake are.
func WaitLock(ctx context.Context, deadline time.Time, wake func() <-chan struct{}, try func() error) error {
	var ch <-chan struct{}
	if wake != nil {
		ch = wake()
	}
	err := try()
	if !IsLockConflict(err) {
		return err
	}
	delay := MinLockPoll
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d := delay
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return LockTimedOut
			}
			d = min(d, left)
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return Interrupted
		case <-ch:
			delay = MinLockPoll
			timer.Stop()
		case <-timer.C:
			delay = min(2*delay, MaxLockPoll)
		}
		if wake != nil {
			ch = wake()
		}
		if err := try(); !IsLockConflict(err) {
			return err
		}
	}
}

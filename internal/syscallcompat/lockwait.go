package syscallcompat

import (
	"context"
	"math/rand/v2"
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
//
// An attempt is a system call, and a system call that takes long (a lock
// on NFS is a round trip to the server) holds an OS thread while it runs:
// the Go runtime starts another one for the goroutines that wait to run.
// Waiters that all began at once and retried in step would then hold a
// thread each (100 waiters whose attempts took 20 ms made a daemon of 107
// threads). So the interval between attempts is jittered, and LockPolls
// bounds how many repeated attempts of a mount run at once.

const (
	// MinLockPoll and MaxLockPoll bound the interval at which WaitLock
	// retries while nothing wakes it: it starts at MinLockPoll and
	// doubles up to MaxLockPoll (each wait a random part of it, at least
	// half), so a lock released by another process, mount or machine is
	// noticed within MaxLockPoll, plus the wait for a slot of LockPolls
	// while more waiters than it has slots retry slow lock calls.
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

// LockPolls bounds how many of the attempts that WaitLock repeats while it
// waits are under way at once, among all the waits that share it (one
// per mount). A first attempt is never held back: a lock nobody holds
// costs no more than the system call. A nil *LockPolls bounds nothing.
// Slots are handed out in the order they were asked for. Safe for
// concurrent use.
//
// The price: while all slots are taken, a waiter notices a release only
// when its turn comes (100 waiters whose attempts take 20 ms, 4 slots:
// every half second), and lock calls that never return (a hung NFS
// server) hold the slots, so that the other waits of the mount end only
// by their context or deadline, as they would in those calls themselves.
// A deadline that passes while waiting for a slot ends the wait without a
// last attempt.
type LockPolls struct {
	slots chan struct{}
}

// NewLockPolls returns a LockPolls that lets n repeated attempts (at
// least one) run at once.
func NewLockPolls(n int) *LockPolls {
	return &LockPolls{slots: make(chan struct{}, max(n, 1))}
}

// acquire takes a slot, waiting while all are taken, unless ctx is
// cancelled first (Interrupted) or deadline (if not zero) passes
// (LockTimedOut).
func (p *LockPolls) acquire(ctx context.Context, deadline time.Time) error {
	if p == nil {
		return nil
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return Interrupted
	case <-expired:
		return LockTimedOut
	}
}

// release gives back a slot taken by acquire.
func (p *LockPolls) release() {
	if p != nil {
		<-p.slots
	}
}

// WaitLock calls try, a non-blocking lock attempt, until it returns
// anything but a conflict (IsLockConflict), and returns that. Between
// attempts it sleeps in the calling goroutine, holding no OS thread, until
// the channel wake returns is closed (wake may be nil: the caller's own
// lock holders never announce a release) or a poll interval passes. wake
// is called before each attempt, so that a release announced after a
// failed attempt is not missed. Every attempt after the first takes a
// slot of polls (nil: no bound) for as long as try runs.
//
// It returns Interrupted as soon as ctx is cancelled (go-fuse cancels a
// request's context when the kernel sends FUSE_INTERRUPT, which it does
// when the waiting process gets a signal, SIGKILL included), and
// LockTimedOut once deadline has passed (the zero time: no deadline).
//
// The first attempt costs no allocation; only a wait does (a timer, and
// another while it waits for a slot with a deadline).
// Safe for concurrent use as far as try and wake are.
func WaitLock(ctx context.Context, deadline time.Time, polls *LockPolls, wake func() <-chan struct{}, try func() error) error {
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
		// Between half the interval and all of it: waiters that began
		// together drift apart instead of trying in step.
		d := delay/2 + rand.N(delay/2+1)
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
		if err := polls.attempt(ctx, deadline, try); !IsLockConflict(err) {
			return err
		}
	}
}

// attempt runs try holding a slot of p, which it gives back also when try
// panics (the FUSE handlers recover panics: a lost slot would stay lost).
// It returns acquire's error if no slot came.
func (p *LockPolls) attempt(ctx context.Context, deadline time.Time, try func() error) error {
	if err := p.acquire(ctx, deadline); err != nil {
		return err
	}
	defer p.release()
	return try()
}

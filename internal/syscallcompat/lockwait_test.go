package syscallcompat

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestWaitLock: WaitLock retries a conflicting attempt until it succeeds,
// is woken by a release, passes on other errors at once, and ends with
// Interrupted when the context is cancelled and with LockTimedOut at the
// deadline, whatever the holder does.
func TestWaitLock(t *testing.T) {
	bg := context.Background()
	conflict := func() error { return syscall.EAGAIN }
	t.Run("retries", func(t *testing.T) {
		n := 0
		err := WaitLock(bg, time.Time{}, nil, func() error {
			if n++; n < 4 {
				return syscall.EACCES
			}
			return nil
		})
		if err != nil || n != 4 {
			t.Errorf("got %v after %d attempts, want nil after 4", err, n)
		}
	})
	t.Run("other error", func(t *testing.T) {
		if err := WaitLock(bg, time.Time{}, nil, func() error { return syscall.ENOLCK }); err != syscall.ENOLCK {
			t.Errorf("got %v, want ENOLCK", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		if err := WaitLock(ctx, time.Time{}, nil, conflict); err != Interrupted {
			t.Errorf("got %v, want Interrupted", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		if err := WaitLock(bg, time.Now().Add(5*time.Millisecond), nil, conflict); err != LockTimedOut {
			t.Errorf("got %v, want LockTimedOut", err)
		}
	})
	t.Run("woken", func(t *testing.T) {
		// A closed wake channel: every wait ends at once, and wake
		// must be asked again before each attempt.
		ch := make(chan struct{})
		close(ch)
		wakes, tries := 0, 0
		err := WaitLock(bg, time.Time{}, func() <-chan struct{} { wakes++; return ch }, func() error {
			if tries++; tries < 3 {
				return syscall.EAGAIN
			}
			return nil
		})
		if err != nil || wakes != tries {
			t.Errorf("got %v with %d wake calls for %d attempts", err, wakes, tries)
		}
	})
}

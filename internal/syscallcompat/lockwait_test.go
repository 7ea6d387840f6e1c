package syscallcompat

import (
	"context"
	"sync"
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
		err := WaitLock(bg, time.Time{}, nil, nil, func() error {
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
		if err := WaitLock(bg, time.Time{}, nil, nil, func() error { return syscall.ENOLCK }); err != syscall.ENOLCK {
			t.Errorf("got %v, want ENOLCK", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		if err := WaitLock(ctx, time.Time{}, nil, nil, conflict); err != Interrupted {
			t.Errorf("got %v, want Interrupted", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		if err := WaitLock(bg, time.Now().Add(5*time.Millisecond), nil, nil, conflict); err != LockTimedOut {
			t.Errorf("got %v, want LockTimedOut", err)
		}
	})
	t.Run("woken", func(t *testing.T) {
		// A closed wake channel: every wait ends at once, and wake
		// must be asked again before each attempt.
		ch := make(chan struct{})
		close(ch)
		wakes, tries := 0, 0
		err := WaitLock(bg, time.Time{}, nil, func() <-chan struct{} { wakes++; return ch }, func() error {
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

// TestLockPolls: waits that share a LockPolls of n slots never have more
// than n repeated attempts under way at once, while first attempts are
// not held back; a wait whose turn does not come ends when its context is
// cancelled or its deadline passes.
func TestLockPolls(t *testing.T) {
	bg := context.Background()
	t.Run("bound", func(t *testing.T) {
		const slots, waiters, attempts = 2, 20, 5
		polls := NewLockPolls(slots)
		var mu sync.Mutex
		running, most, firsts := 0, 0, 0
		var wg sync.WaitGroup
		for range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				err := WaitLock(bg, time.Time{}, polls, nil, func() error {
					n++
					mu.Lock()
					if n == 1 {
						firsts++
					} else {
						running++
						most = max(most, running)
					}
					mu.Unlock()
					if n == 1 {
						return syscall.EAGAIN
					}
					time.Sleep(time.Millisecond) // a slow attempt
					mu.Lock()
					running--
					mu.Unlock()
					if n < attempts {
						return syscall.EAGAIN
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if most > slots {
			t.Errorf("%d repeated attempts at once, want at most %d", most, slots)
		}
		if most < slots {
			t.Errorf("at most %d repeated attempts at once with %d waiters: the slots were not used", most, waiters)
		}
		if firsts != waiters {
			t.Errorf("%d first attempts, want %d", firsts, waiters)
		}
	})
	t.Run("panic", func(t *testing.T) {
		// An attempt that panics gives its slot back: the next wait's
		// repeated attempt still gets the only one.
		one := NewLockPolls(1)
		func() {
			defer func() { _ = recover() }()
			n := 0
			_ = WaitLock(bg, time.Time{}, one, nil, func() error {
				if n++; n == 1 {
					return syscall.EAGAIN
				}
				panic("attempt")
			})
		}()
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		n := 0
		err := WaitLock(ctx, time.Time{}, one, nil, func() error {
			if n++; n == 1 {
				return syscall.EAGAIN
			}
			return nil
		})
		if err != nil || n != 2 {
			t.Errorf("after a panicking attempt: got %v after %d attempts, want nil after 2", err, n)
		}
	})
	// One slot, taken for the whole subtest: no repeated attempt runs.
	full := NewLockPolls(1)
	if err := full.acquire(bg, time.Time{}); err != nil {
		t.Fatal(err)
	}
	defer full.release()
	tries := 0
	try := func() error { tries++; return syscall.EAGAIN }
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
		defer cancel()
		tries = 0
		if err := WaitLock(ctx, time.Time{}, full, nil, try); err != Interrupted || tries != 1 {
			t.Errorf("got %v after %d attempts, want Interrupted after 1", err, tries)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		tries = 0
		if err := WaitLock(bg, time.Now().Add(20*time.Millisecond), full, nil, try); err != LockTimedOut || tries != 1 {
			t.Errorf("got %v after %d attempts, want LockTimedOut after 1", err, tries)
		}
	})
}

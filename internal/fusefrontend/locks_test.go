//go:build linux

package fusefrontend

import (
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// TestFlushNeededForwardLocks: where locks are forwarded, FLUSH is never
// refused: it is what releases a process's locks on close.
func TestFlushNeededForwardLocks(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !flushNeeded(Args{CipherDir: dir, ForwardLocks: true}, fd) {
		t.Error("FLUSH refused although locks are forwarded")
	}
}

// TestForwardedLocksExclusive: forwarded write locks exclude each other
// while many owners wait at once (open-file-description locks through
// separate opens), whether a holder unlocks or just closes (RELEASE), and
// every owner's descriptor is gone afterwards. This process takes POSIX
// locks meanwhile (FLUSH of every close releases them). Run with -race,
// it checks the lock table's synchronization.
func TestForwardedLocksExclusive(t *testing.T) {
	tf := mountFS(t, testConfig{})
	if !tf.rn.args.ForwardLocks {
		t.Fatal("the test mount does not forward locks")
	}
	p := tf.path("f")
	mustWrite(t, p, []byte("data"))
	const workers, rounds = 8, 25
	var inside atomic.Int32
	var wg sync.WaitGroup
	critical := func(who string) {
		if n := inside.Add(1); n != 1 {
			t.Errorf("%s: %d holders of an exclusive lock", who, n)
		}
		time.Sleep(100 * time.Microsecond) // not a timing assertion: widens the window
		inside.Add(-1)
	}
	lock := func(f *os.File, cmd int, typ int16) error {
		return unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: typ})
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				f, err := os.OpenFile(p, os.O_RDWR, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if err := lock(f, unix.F_OFD_SETLKW, unix.F_WRLCK); err != nil {
					t.Errorf("F_OFD_SETLKW: %v", err)
					f.Close()
					return
				}
				critical("OFD owner")
				if (w+r)%2 == 0 {
					// Released by the unlock; otherwise by RELEASE.
					if err := lock(f, unix.F_OFD_SETLK, unix.F_UNLCK); err != nil {
						t.Error(err)
					}
				}
				f.Close()
			}
		}()
	}
	// This process as one POSIX owner: its locks conflict with the OFD
	// owners', and go with the close of any descriptor of the file by
	// any goroutine (FLUSH), so they take part in no exclusion check.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := range rounds {
			f, err := os.OpenFile(p, os.O_RDONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			g, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				f.Close()
				return
			}
			if err := lock(g, unix.F_SETLKW, unix.F_WRLCK); err != nil {
				t.Errorf("F_SETLKW: %v", err)
			}
			if r%2 == 0 {
				g.Close() // the lock was taken through g
				f.Close()
			} else {
				f.Close() // a read-only descriptor's close releases too
				g.Close()
			}
		}
	}()
	wg.Wait()
	// RELEASE is asynchronous: wait for the last ones.
	left := func() int {
		tf.rn.locks.mu.Lock()
		defer tf.rn.locks.mu.Unlock()
		return len(tf.rn.locks.owners)
	}
	if !testutil.WaitFor(10*time.Second, func() bool { return left() == 0 }) {
		t.Errorf("%d files still have lock owners after every descriptor was closed", left())
	}
}

// TestLockPollsShared: the mount bounds the repeated attempts of all its
// lock waits with one syscallcompat.LockPolls: forwarded locks and the
// -sharedstorage content locks share it (nil would bound nothing).
func TestLockPollsShared(t *testing.T) {
	core := coretest.New(t, coretest.Options{MasterKey: make([]byte, cryptocore.KeyLen), HKDF: true, Names: nametransform.Options{Raw64: true}})
	rn, err := NewRootNode(Args{CipherDir: t.TempDir(), SharedStorage: true, Logger: slog.New(slog.DiscardHandler)}, core.NT, core.CE)
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	if rn.locks.polls == nil {
		t.Fatal("the forwarded locks' waits have no LockPolls")
	}
	if got := rn.contentOptions().LockPolls; got != rn.locks.polls {
		t.Errorf("content locks wait with LockPolls %p, forwarded locks with %p", got, rn.locks.polls)
	}
}

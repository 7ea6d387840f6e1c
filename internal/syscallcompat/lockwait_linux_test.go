package syscallcompat

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLockPollsThreads: waiters whose repeated attempts are slow system
// calls (a lock on NFS is a round trip) hold no OS thread each when they
// share a LockPolls: the process gains far fewer threads than waiters.
// Without the bound the Go runtime starts a thread for nearly every
// attempt under way (100 here).
func TestLockPollsThreads(t *testing.T) {
	const waiters = 100
	polls := NewLockPolls(4)
	before := threads(t)
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			n := 0
			err := WaitLock(context.Background(), time.Time{}, polls, nil, func() error {
				if n++; n == 1 {
					return syscall.EAGAIN
				}
				// A slow attempt: a system call that takes 20 ms.
				ts := syscall.Timespec{Nsec: int64(20 * time.Millisecond)}
				for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	after := threads(t)
	t.Logf("threads: %d before, %d after %d waiters", before, after, waiters)
	if after-before >= waiters/2 {
		t.Errorf("%d new threads for %d waiters with slow attempts, want fewer than %d", after-before, waiters, waiters/2)
	}
}

// threads is the number of threads of this process.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

package fusefrontend_reverse

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// TestSymlinkSwapAttack: while a user with write access to PLAINDIR keeps
// replacing a directory by a symlink to a directory outside PLAINDIR, the
// view (decrypted again through a forward mount on top) never shows
// anything from outside: no contents, no names.
func TestSymlinkSwapAttack(t *testing.T) {
	plain := t.TempDir()
	d := filepath.Join(plain, "d")
	mustMkdir(t, d)
	mustWriteFile(t, filepath.Join(d, "f"), []byte("public"))
	outside := filepath.Join(t.TempDir(), "d")
	mustMkdir(t, outside)
	const secret = "SECRET-DATA"
	mustWriteFile(t, filepath.Join(outside, "f"), []byte(secret))
	mustWriteFile(t, filepath.Join(outside, "canary"), []byte(secret))

	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	fwd := mountForward(t, tv14Config(), m.mnt)

	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		aside := d + ".aside"
		for i := 0; !stop.Load(); i++ {
			if os.Rename(d, aside) != nil {
				continue
			}
			if os.Symlink(outside, d) == nil {
				swaps.Add(1)
				time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				os.Remove(d)
			}
			if err := os.Rename(aside, d); err != nil {
				t.Errorf("attacker could not restore: %v", err)
				return
			}
			// Both mounts cache entries for a second: leave the real
			// directory in place most of the time so that some lookups
			// see it.
			time.Sleep(time.Millisecond)
		}
	}()
	var ok atomic.Int64
	// The victim itself never follows symlinks: the attacker's symlink is
	// faithfully shown (as a symlink) by the view, and a path-based access
	// through it would be the victim's own doing.
	rootFd, err := unix.Open(fwd.mnt, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootFd)
	errs := map[string]int{}
	defer func() { t.Log(errs) }()
	// At least 3 s, and on until something succeeded (at most 15 s): on
	// a loaded machine the forward mount kept the attacker's symlink
	// cached for the whole 3 s once (950,000 ENOTDIR), and the check that
	// the attack ran failed.
	start := time.Now()
	for el := time.Since(start); el < 3*time.Second || ok.Load() == 0 && el < 15*time.Second; el = time.Since(start) {
		dfd, err := syscallcompat.OpenDirAt(rootFd, "d")
		if err != nil {
			errs[err.Error()]++
			// Not a busy loop: the attacker and both daemons need
			// the CPU to move on.
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if fd, err := syscallcompat.Openat(dfd, "f", unix.O_RDONLY, 0); err == nil {
			b := make([]byte, 100)
			n, err := unix.Read(fd, b)
			unix.Close(fd)
			if err == nil {
				ok.Add(1)
			}
			if bytes.Contains(b[:max(n, 0)], []byte(secret)) {
				t.Error("the view served a file from outside PLAINDIR")
			}
		}
		if ents, err := syscallcompat.Getdents(dfd); err == nil {
			ok.Add(1)
			for _, e := range ents {
				if e.Name == "canary" {
					t.Error("the view listed a directory outside PLAINDIR")
				}
			}
		}
		var st unix.Stat_t
		if syscallcompat.Fstatat(dfd, "canary", &st) == nil {
			t.Error("the view found a name outside PLAINDIR")
		}
		unix.Close(dfd)
		if t.Failed() {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d successful operations", swaps.Load(), ok.Load())
	if swaps.Load() == 0 || ok.Load() == 0 {
		t.Fatal("the attack did not run")
	}
}

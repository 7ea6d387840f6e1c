package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Exit codes of a lock probe (a re-executed test binary, see lockProbe).
const (
	probeGot      = 0  // the lock was free and is now released again
	probeConflict = 11 // someone else holds a conflicting lock
	probeFailed   = 2  // the probe itself failed
)

// lockProbeEnv names the variable that turns the test binary into a lock
// probe: "fcntl:PATH" or "flock:PATH".
const lockProbeEnv = "GOCRYPTFS_TEST_LOCK_PROBE"

// lockProbe, in a process started by probeLock, tries to take an exclusive
// lock without waiting and reports the outcome as exit code. ok is false in
// the normal test process.
func lockProbe() (code int, ok bool) {
	v := os.Getenv(lockProbeEnv)
	if v == "" {
		return 0, false
	}
	kind, path, _ := strings.Cut(v, ":")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return probeFailed, true
	}
	defer f.Close()
	if kind == "flock" {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	} else {
		lk := unix.Flock_t{Type: unix.F_WRLCK}
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	}
	switch {
	case err == nil:
		// Unlock explicitly: a lock dropped by close(2) on a FUSE file is
		// released with the asynchronous RELEASE request, which may reach
		// the backing file only after the next subtest's lock attempt.
		if kind == "flock" {
			err = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		} else {
			err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_UNLCK})
		}
		if err != nil {
			return probeFailed, true
		}
		return probeGot, true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES), errors.Is(err, unix.EWOULDBLOCK):
		return probeConflict, true
	}
	return probeFailed, true
}

// probeLock runs a lock probe of the given kind on path in another process
// and returns its exit code.
func probeLock(t *testing.T, kind, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), lockProbeEnv+"="+kind+":"+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() != probeFailed:
		return ee.ExitCode()
	}
	t.Fatalf("lock probe on %s: %v %s", path, err, out)
	return -1
}

// backingFile returns the only regular file in the CIPHERDIR root besides
// the config and the directory IV: the ciphertext of the one plaintext
// file the test created.
func backingFile(t *testing.T, cipherdir string) string {
	t.Helper()
	ents, err := os.ReadDir(cipherdir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != "gocryptfs.conf" && e.Name() != "gocryptfs.diriv" {
			found = append(found, filepath.Join(cipherdir, e.Name()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one ciphertext file, have %q", found)
	}
	return found[0]
}

// TestLocksForwarded: application fcntl and flock locks taken on the mount
// reach the backing ciphertext file. A lock held through the mount
// conflicts with one tried by another process on the mount, on a second
// mount of the same CIPHERDIR, and on the ciphertext file itself, and the
// other way round; unlocking releases it everywhere.
func TestLocksForwarded(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	mnt2 := mountFS(t, dir, "-extpass", "echo test")
	plain := filepath.Join(mnt, "f")
	if err := os.WriteFile(plain, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	backing := backingFile(t, dir)
	places := map[string]string{"mount": plain, "second mount": filepath.Join(mnt2, "f"), "ciphertext": backing}

	lockers := []struct {
		kind         string
		lock, unlock func(fd int) error
	}{
		{"fcntl", func(fd int) error {
			return unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK})
		}, func(fd int) error {
			return unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_UNLCK})
		}},
		{"flock", func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) },
			func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) }},
	}
	for _, l := range lockers {
		for _, holder := range []string{plain, backing} {
			t.Run(l.kind+"/held on "+filepath.Base(filepath.Dir(holder)), func(t *testing.T) {
				f, err := os.OpenFile(holder, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := l.lock(int(f.Fd())); err != nil {
					t.Fatalf("lock: %v", err)
				}
				for name, p := range places {
					if p == holder {
						continue
					}
					if got := probeLock(t, l.kind, p); got != probeConflict {
						t.Errorf("while locked: probe on %s got exit %d, want %d (conflict)", name, got, probeConflict)
					}
				}
				if err := l.unlock(int(f.Fd())); err != nil {
					t.Fatalf("unlock: %v", err)
				}
				for name, p := range places {
					if got := probeLock(t, l.kind, p); got != probeGot {
						t.Errorf("after unlock: probe on %s got exit %d, want %d", name, got, probeGot)
					}
				}
			})
		}
	}
}

//go:build linux

package cli_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentio"
	"gocryptfs/internal/testutil"
)

// Locks (docs/cli.md, "Locks"): by default the kernel keeps fcntl and
// flock locks itself, as on any local filesystem; with -sharedstorage they
// are forwarded to the ciphertext files with POSIX semantics, interruptible
// waits and a bounded number of daemon threads.

// Exit codes of a lock probe (a re-executed test binary, see lockProbe).
const (
	probeGot      = 0  // the lock was free (and is released again); getlk: no lock reported
	probeConflict = 11 // someone else holds a conflicting lock
	probeEINTR    = 12 // a waiting lock request failed with EINTR
	probeFailed   = 2  // the probe itself failed
)

// lockProbeEnv names the variable that turns the test binary into a lock
// probe: "KIND:PATH", KIND one of
//
//	fcntl  F_SETLK a write lock on the whole file, without waiting
//	flock  flock(LOCK_EX|LOCK_NB)
//	getlk  F_GETLK for a write lock on the whole file
//	wait   F_SETLKW a write lock on the whole file
//	alarm  wait, with a SIGALRM handler installed without SA_RESTART, so
//	       that a SIGALRM makes a waiting F_SETLKW fail with EINTR
//	many   manyWaiters open descriptors, each waiting in F_OFD_SETLKW
//	read   an O_DIRECT read of the file (a READ request that the reader
//	       waits for in read(2), not in the page cache)
//	reads  an O_DIRECT read of each regular file in the directory PATH,
//	       all at once
//	writesig  a pwrite(2) at offset 0, catching SIGALRM, not retried on
//	       EINTR
//	writestay  writesig, then the process stays a minute (its threads
//	       live on whatever the write returned)
const lockProbeEnv = "GOCRYPTFS_TEST_LOCK_PROBE"

// manyWaiters is the number of waiting lock requests of the "many" probe
// (the same in the test and in the probe: both run on this machine).
var manyWaiters = enoughWaiters(300)

// lockProbe, in a process started by startProbe, runs the probe its
// environment names and reports the outcome as exit code. ok is false in
// the normal test process.
func lockProbe() (code int, ok bool) {
	v := os.Getenv(lockProbeEnv)
	if v == "" {
		return 0, false
	}
	kind, path, _ := strings.Cut(v, ":")
	switch kind {
	case "many":
		return probeMany(path), true
	case "read":
		return probeReads([]string{path}), true
	case "writesig":
		return probeWriteSignal(path), true
	case "writestay":
		code := probeWriteSignal(path)
		time.Sleep(time.Minute)
		return code, true
	case "reads":
		ents, err := os.ReadDir(path)
		if err != nil {
			return probeFailed, true
		}
		var paths []string
		for _, e := range ents {
			if e.Type().IsRegular() {
				paths = append(paths, filepath.Join(path, e.Name()))
			}
		}
		return probeReads(paths), true
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return probeFailed, true
	}
	defer f.Close()
	fd := f.Fd()
	whole := func(typ int16) *unix.Flock_t { return &unix.Flock_t{Type: typ, Whence: unix.SEEK_SET} }
	switch kind {
	case "flock":
		err = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
	case "fcntl":
		err = unix.FcntlFlock(fd, unix.F_SETLK, whole(unix.F_WRLCK))
	case "getlk":
		lk := whole(unix.F_WRLCK)
		if err := unix.FcntlFlock(fd, unix.F_GETLK, lk); err != nil {
			return probeFailed, true
		}
		if lk.Type == unix.F_UNLCK {
			return probeGot, true
		}
		return probeConflict, true
	case "alarm":
		if noRestartSIGALRM() != nil {
			return probeFailed, true
		}
		fallthrough
	case "wait":
		// Not retried on EINTR: that is what "alarm" looks for.
		err = unix.FcntlFlock(fd, unix.F_SETLKW, whole(unix.F_WRLCK))
	default:
		return probeFailed, true
	}
	switch {
	case err == nil:
		// Unlock explicitly: a flock lock dropped by close(2) on a FUSE
		// file is released with the asynchronous RELEASE request, which
		// may reach the backing file only after the next probe.
		if kind == "flock" {
			err = unix.Flock(int(fd), unix.LOCK_UN)
		} else {
			err = unix.FcntlFlock(fd, unix.F_SETLK, whole(unix.F_UNLCK))
		}
		if err != nil {
			return probeFailed, true
		}
		return probeGot, true
	case errors.Is(err, unix.EINTR):
		return probeEINTR, true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES), errors.Is(err, unix.EWOULDBLOCK):
		return probeConflict, true
	}
	return probeFailed, true
}

// probeMany waits for a write lock on path through manyWaiters open file
// descriptions at once (F_OFD_SETLKW: each its own lock owner), takes and
// releases it in each, and exits probeGot when all got it.
func probeMany(path string) int {
	var wg sync.WaitGroup
	var failed sync.Once
	code := probeGot
	for range manyWaiters {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return probeFailed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLKW, &unix.Flock_t{Type: unix.F_WRLCK})
			if err == nil {
				err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_UNLCK})
			}
			if err != nil {
				failed.Do(func() { code = probeFailed })
			}
		}()
	}
	wg.Wait()
	return code
}

// probeReads reads the start of each file in paths with O_DIRECT, each in
// a goroutine (so each in a thread of its own while it waits in read(2)),
// and exits probeGot when every read returned data.
func probeReads(paths []string) int {
	var wg sync.WaitGroup
	var failed sync.Once
	code := probeGot
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_DIRECT, 0)
			if err == nil {
				var n int
				n, err = f.Read(make([]byte, 4096))
				if err == nil && n == 0 {
					err = errors.New("empty read")
				}
				f.Close()
			}
			if err != nil {
				failed.Do(func() { code = probeFailed })
			}
		}()
	}
	wg.Wait()
	return code
}

// probeWriteSignal writes "DATA" at the start of path in one pwrite(2),
// not retried on EINTR, while SIGALRM is caught (the Go runtime's handler,
// with SA_RESTART, which does not restart a FUSE request that failed with
// EINTR). It exits probeGot when the write succeeded, probeEINTR when it
// failed with EINTR.
func probeWriteSignal(path string) int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGALRM)
	fd, err := unix.Open(path, unix.O_WRONLY, 0)
	if err != nil {
		return probeFailed
	}
	defer unix.Close(fd)
	n, err := unix.Pwrite(fd, []byte("DATA"), 0)
	switch {
	case errors.Is(err, unix.EINTR):
		return probeEINTR
	case err != nil || n != 4:
		return probeFailed
	}
	return probeGot
}

// kernelSigaction is the kernel's struct sigaction on amd64 and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// saRestart is SA_RESTART (asm-generic/signal-defs.h).
const saRestart = 0x10000000

// noRestartSIGALRM makes SIGALRM interrupt system calls with EINTR: the Go
// runtime installs its handler with SA_RESTART, under which the kernel
// restarts an interrupted F_SETLKW. The handler stays the runtime's.
func noRestartSIGALRM() error {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGALRM)
	var sa kernelSigaction
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGALRM), 0, uintptr(unsafe.Pointer(&sa)), 8, 0, 0); e != 0 {
		return e
	}
	sa.flags &^= saRestart
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGALRM), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0); e != 0 {
		return e
	}
	return nil
}

// startProbe starts a lock probe of the given kind on path in another
// process, which inherits the descriptors inherit; the test ends it if it
// is still running.
func startProbe(t *testing.T, kind, path string, inherit ...*os.File) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), lockProbeEnv+"="+kind+":"+path)
	cmd.ExtraFiles = inherit
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// probeLock runs a lock probe of the given kind on path in another process
// and returns its exit code.
func probeLock(t *testing.T, kind, path string) int {
	t.Helper()
	cmd := startProbe(t, kind, path)
	return probeExit(t, cmd, testutil.RunTimeout)
}

// probeExit waits for a probe (at most timeout: a hang detector, not a
// speed assertion) and returns its exit code.
func probeExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) int {
	t.Helper()
	err := testutil.WaitExit(cmd, timeout)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() != probeFailed && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	t.Fatalf("lock probe: %v", err)
	return -1
}

// blockedIn returns the threads of pid that are in a system call for which
// match (given its number and first two arguments) holds
// (/proc/PID/task/TID/syscall: number and arguments of the system call a
// blocked thread is in).
func blockedIn(pid int, match func(nr int, arg1, arg2 uint64) bool) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var tids []int
	for _, e := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, e.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		nr, err1 := strconv.Atoi(f[0])
		arg1, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		arg2, err3 := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		if err1 == nil && err2 == nil && err3 == nil && match(nr, arg1, arg2) {
			tid, _ := strconv.Atoi(e.Name())
			tids = append(tids, tid)
		}
	}
	return tids
}

// inSetlkw matches fcntl(F_SETLKW) and fcntl(F_OFD_SETLKW) for blockedIn.
func inSetlkw(nr int, _, cmd uint64) bool {
	return nr == unix.SYS_FCNTL && (cmd == unix.F_SETLKW || cmd == unix.F_OFD_SETLKW)
}

// inBlockingLock matches a lock call that sleeps until the lock is free
// (fcntl F_SETLKW or F_OFD_SETLKW, flock without LOCK_NB) for blockedIn.
func inBlockingLock(nr int, _, arg2 uint64) bool {
	return inSetlkw(nr, 0, arg2) || nr == unix.SYS_FLOCK && arg2&unix.LOCK_NB == 0
}

// inRead matches read(2) and pread(2) for blockedIn.
func inRead(nr int, _, _ uint64) bool {
	return nr == unix.SYS_READ || nr == unix.SYS_PREAD64
}

// inWrite matches a write(2) or pwrite(2) (see blockedIn).
func inWrite(nr int, _, _ uint64) bool {
	return nr == unix.SYS_WRITE || nr == unix.SYS_PWRITE64
}

// waitBlocked waits until n threads of cmd wait for a lock and returns
// them. A lock request that reached the kernel is sent to the daemon
// before the thread sleeps.
func waitBlocked(t *testing.T, cmd *exec.Cmd, n int) []int {
	t.Helper()
	return waitBlockedIn(t, cmd, n, inSetlkw)
}

// waitBlockedIn waits until n threads of cmd are in a system call that
// match accepts (see blockedIn) and returns them.
func waitBlockedIn(t *testing.T, cmd *exec.Cmd, n int, match func(nr int, arg1, arg2 uint64) bool) []int {
	t.Helper()
	var tids []int
	if !testutil.WaitFor(testutil.RunTimeout, func() bool {
		tids = blockedIn(cmd.Process.Pid, match)
		return len(tids) >= n
	}) {
		t.Fatalf("%d of %d requests of the probe are waiting", len(tids), n)
	}
	return tids
}

// procState is the state letter of /proc/PID/stat ("D": uninterruptible).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

// threadCount is the Threads: line of /proc/PID/status.
func threadCount(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line")
	return 0
}

// backingFile returns the only regular file in the CIPHERDIR root besides
// the config and the directory IV: the ciphertext of the one plaintext
// file the test created.
func backingFile(t *testing.T, cipherdir string) string {
	t.Helper()
	found := backingFiles(t, cipherdir)
	if len(found) != 1 {
		t.Fatalf("want one ciphertext file, have %q", found)
	}
	return found[0]
}

// backingFiles returns the regular files in the CIPHERDIR root besides the
// config and the directory IV: the ciphertext files of the root.
func backingFiles(t *testing.T, cipherdir string) []string {
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
	return found
}

// onlySubdir returns the only directory in the CIPHERDIR root: the
// ciphertext directory of the one plaintext directory the test created.
func onlySubdir(t *testing.T, cipherdir string) string {
	t.Helper()
	ents, err := os.ReadDir(cipherdir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range ents {
		if e.IsDir() {
			found = append(found, filepath.Join(cipherdir, e.Name()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one ciphertext directory, have %q", found)
	}
	return found[0]
}

// holdLock takes a write lock on the whole of path (fcntl, owned by this
// process) and returns the function that releases it; the test releases
// it at the end in any case, before the mounts go.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	return holdLockFrom(t, path, unix.F_SETLK, 0)
}

// holdLockFrom is holdLock for the range from start to the end of file
// and beyond, with the lock command cmd: F_SETLK (owned by this process)
// or F_OFD_SETLK (owned by an open file description of its own).
func holdLockFrom(t *testing.T, path string, cmd int, start int64) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: unix.F_WRLCK, Start: start}); err != nil {
		t.Fatalf("lock %s: %v", path, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: unix.F_UNLCK, Start: start})
			f.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestLocksPOSIX: fcntl locks on the mount behave as on a plain directory
// (side by side), with the default options and with -sharedstorage: a
// process never conflicts with itself across two opens, another process
// conflicts, and closing any descriptor of the file (a dup, a second open,
// a dup closed on another thread) releases all of the process's locks on
// it, after which F_GETLK from another process reports the file free; a
// child closing an inherited descriptor releases nothing. flock and F_OFD_* locks belong to
// the open file: two opens conflict.
func TestLocksPOSIX(t *testing.T) {
	dir := initFS(t)
	places := []struct{ name, dir string }{
		{"plain", t.TempDir()},
		{"default", mountFS(t, dir, "-extpass", "echo test")},
		{"sharedstorage", mountFS(t, initFS(t), "-extpass", "echo test", "-sharedstorage")},
	}
	for _, pl := range places {
		t.Run(pl.name, func(t *testing.T) {
			p := filepath.Join(pl.dir, "f")
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			open := func() *os.File {
				f, err := os.OpenFile(p, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return f
			}
			lock := func(f *os.File, cmd int, typ int16) error {
				return unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: typ})
			}
			expect := func(step, kind string, want int) {
				t.Helper()
				if got := probeLock(t, kind, p); got != want {
					t.Errorf("%s: %s probe from another process: exit %d, want %d", step, kind, got, want)
				}
			}
			f1, f2 := open(), open()
			if err := lock(f1, unix.F_SETLK, unix.F_WRLCK); err != nil {
				t.Fatalf("lock through the first open: %v", err)
			}
			if err := lock(f2, unix.F_SETLK, unix.F_WRLCK); err != nil {
				t.Errorf("lock through a second open of the same process: %v, want success", err)
			}
			expect("locked", "fcntl", probeConflict)
			expect("locked", "getlk", probeConflict)

			// dup + close releases.
			dup, err := unix.Dup(int(f1.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(dup)
			expect("after dup+close", "getlk", probeGot)
			expect("after dup+close", "fcntl", probeGot)

			// Closing the second open releases the lock taken through
			// the first.
			if err := lock(f1, unix.F_SETLK, unix.F_WRLCK); err != nil {
				t.Fatal(err)
			}
			expect("relocked", "fcntl", probeConflict)
			f2.Close()
			expect("after closing a second descriptor", "getlk", probeGot)
			expect("after closing a second descriptor", "fcntl", probeGot)

			// A child process that inherited the descriptor and closes
			// it (at exit) is another owner: the lock stays.
			if err := lock(f1, unix.F_SETLK, unix.F_WRLCK); err != nil {
				t.Fatal(err)
			}
			child := startProbe(t, "getlk", p, f1)
			if got := probeExit(t, child, testutil.RunTimeout); got != probeConflict {
				t.Errorf("getlk probe holding an inherited descriptor: exit %d, want %d", got, probeConflict)
			}
			expect("after a child closed an inherited descriptor", "fcntl", probeConflict)

			// A close on another thread (clone with CLONE_FILES) is a
			// close by the same owner: the lock goes.
			dup, err = unix.Dup(int(f1.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			closed := make(chan struct{})
			go func() {
				runtime.LockOSThread() // this thread ends with the goroutine
				unix.Close(dup)
				close(closed)
			}()
			<-closed
			expect("after a close on another thread", "getlk", probeGot)

			// Open-file-description locks and flock: two opens conflict.
			f3 := open()
			if err := lock(f1, unix.F_OFD_SETLK, unix.F_WRLCK); err != nil {
				t.Fatal(err)
			}
			if err := lock(f3, unix.F_OFD_SETLK, unix.F_WRLCK); !errors.Is(err, unix.EAGAIN) {
				t.Errorf("F_OFD_SETLK through a second open while the first holds one: %v, want EAGAIN", err)
			}
			if err := lock(f1, unix.F_OFD_SETLK, unix.F_UNLCK); err != nil {
				t.Fatal(err)
			}
			if err := lock(f3, unix.F_OFD_SETLK, unix.F_WRLCK); err != nil {
				t.Errorf("F_OFD_SETLK after the unlock: %v", err)
			}
			lock(f3, unix.F_OFD_SETLK, unix.F_UNLCK)
			if err := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			if err := unix.Flock(int(f3.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
				t.Errorf("flock through a second open: %v, want EWOULDBLOCK", err)
			}
			unix.Flock(int(f1.Fd()), unix.LOCK_UN)
		})
	}
}

// TestLocksLocalByDefault: without -sharedstorage the kernel keeps locks
// itself, as on any local filesystem (and as the reference does): a
// second mount of the same CIPHERDIR does not see them.
func TestLocksLocalByDefault(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	mnt2 := mountFS(t, dir, "-extpass", "echo test")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	holdLock(t, p)
	if got := probeLock(t, "fcntl", p); got != probeConflict {
		t.Errorf("probe on the same mount: exit %d, want %d (conflict)", got, probeConflict)
	}
	if got := probeLock(t, "fcntl", filepath.Join(mnt2, "f")); got != probeGot {
		t.Errorf("probe on a second mount: exit %d, want %d (locks are local)", got, probeGot)
	}
}

// TestLocksSharedStorage: with -sharedstorage, fcntl and flock locks taken
// on the mount reach the backing ciphertext file. A lock held through the
// mount conflicts with one tried by another process on the mount, on a
// second mount of the same CIPHERDIR, and on the ciphertext file itself,
// and the other way round; unlocking releases it everywhere.
func TestLocksSharedStorage(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	mnt2 := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
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
	// A close of the holder's descriptor releases its lock for the
	// other mount at once (FLUSH), not only at RELEASE.
	t.Run("close releases", func(t *testing.T) {
		f, err := os.OpenFile(plain, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_RDLCK}); err != nil {
			t.Fatal(err)
		}
		if got := probeLock(t, "fcntl", places["second mount"]); got != probeConflict {
			t.Errorf("while read-locked: probe got exit %d, want %d", got, probeConflict)
		}
		f.Close()
		if got := probeLock(t, "getlk", places["second mount"]); got != probeGot {
			t.Errorf("after close: getlk probe got exit %d, want %d (free)", got, probeGot)
		}
	})
}

// TestLockWaitInterruptible: with -sharedstorage a process waiting in
// F_SETLKW for a lock held elsewhere returns at once when it is killed
// (SIGKILL: it must not stay in D state until the holder lets go) or
// interrupted by a signal whose handler does not restart system calls
// (EINTR, as with local locks). The deadlines only detect a hang.
func TestLockWaitInterruptible(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("SIGKILL", func(t *testing.T) {
		release := holdLock(t, p)
		cmd := startProbe(t, "wait", p)
		waitBlocked(t, cmd, 1)
		cmd.Process.Kill()
		if _, stuck := awaitWaiter(t, cmd, release); stuck != "" {
			t.Errorf("a waiter killed with SIGKILL was still there (state %s) until the holder let go", stuck)
		}
	})
	t.Run("SIGALRM", func(t *testing.T) {
		release := holdLock(t, p)
		cmd := startProbe(t, "alarm", p)
		tids := waitBlocked(t, cmd, 1)
		if err := unix.Tgkill(cmd.Process.Pid, tids[0], unix.SIGALRM); err != nil {
			t.Fatal(err)
		}
		code, stuck := awaitWaiter(t, cmd, release)
		if stuck != "" || code != probeEINTR {
			t.Errorf("F_SETLKW interrupted by SIGALRM: exit %d (still waiting: %q), want %d (EINTR) at once", code, stuck, probeEINTR)
		}
	})
}

// awaitWaiter waits for a probe that waits for a lock held through
// release. If it has not exited after testutil.RunTimeout (a hang
// detector), stuck is its state then, and the lock is released so that it
// can finish. code is its exit code.
func awaitWaiter(t *testing.T, cmd *exec.Cmd, release func()) (code int, stuck string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(testutil.RunTimeout):
		stuck = procState(cmd.Process.Pid)
		release()
		err = <-done
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stuck
	case errors.As(err, &ee):
		return ee.ExitCode(), stuck
	}
	t.Fatalf("lock probe: %v", err)
	return -1, stuck
}

// TestLockWaitersThreads: with -sharedstorage, manyWaiters lock requests
// waiting at once (each its own lock owner) cost the daemon no thread
// each: its thread count stays bounded (checkThreadsBounded). When the
// holder lets go, every waiter gets the lock in turn.
func TestLockWaitersThreads(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid := daemonPid(t, mnt)
	if pid == 0 {
		t.Fatal("daemon not found")
	}
	// Held on the ciphertext: the daemon sees it only by trying.
	release := holdLock(t, backingFile(t, dir))
	cmd := startProbe(t, "many", p)
	waitBlocked(t, cmd, manyWaiters)
	checkThreadsBounded(t, pid, manyWaiters)
	release()
	if got := probeExit(t, cmd, testutil.RunTimeout); got != probeGot {
		t.Errorf("waiters after the release: exit %d, want %d", got, probeGot)
	}
}

// enoughWaiters is how many waiting requests a test of the daemon's
// thread count starts: at least least, and more on a machine with many
// CPUs, so that the threads a daemon needs whatever waits (up to
// GOMAXPROCS running, go-fuse's up to 16 readers of /dev/fuse, the
// runtime's own) are a small part of it.
func enoughWaiters(least int) int {
	return max(least, 4*(runtime.NumCPU()+16))
}

// checkThreadsBounded checks, while waiters requests of a probe wait for
// locks, that the daemon pid ties no thread to a waiter:
//   - none of its threads sleeps in a blocking lock call;
//   - fewer than half the waiters' count of its threads are doing
//     anything (in a system call other than those in which the Go
//     runtime parks an idle thread, or running);
//   - it has fewer threads than waiters.
//
// The Go runtime keeps every thread it ever started, and starts one
// whenever a goroutine spends long in a system call while others are
// ready to run: a burst of slow system calls (the waiters' first lock
// attempts on a loaded machine or slow storage) leaves idle threads
// behind, 57 for 100 waiters in one CI run. Only a design that holds a
// thread per waiter has as many threads as waiters; one whose waiters
// sleep in any system call of their own (not just a lock call) has half
// as many busy threads already. (Running threads are at most GOMAXPROCS,
// below half the waiters: a design that spins is not what this catches.)
func checkThreadsBounded(t *testing.T, pid, waiters int) {
	t.Helper()
	busy := 0
	for range 10 {
		if tids := blockedIn(pid, inBlockingLock); len(tids) > 0 {
			t.Errorf("%d daemon threads sleep in a blocking lock call while %d requests wait", len(tids), waiters)
			break
		}
		busy = max(busy, busyThreads(t, pid))
		time.Sleep(10 * time.Millisecond)
	}
	n := threadCount(t, pid)
	t.Logf("daemon threads with %d waiting requests: %d, at most %d of them busy (%d CPUs)", waiters, n, busy, runtime.NumCPU())
	if busy >= waiters/2 {
		t.Errorf("%d daemon threads busy with %d requests waiting for locks, want < %d", busy, waiters, waiters/2)
	}
	if n >= waiters {
		t.Errorf("daemon has %d threads with %d requests waiting for locks, want fewer than the waiters", n, waiters)
	}
}

// busyThreads counts the threads of pid that are not parked by the Go
// runtime: those running or in any system call but futex (an idle
// thread, or one waiting for a lock of the runtime), epoll_pwait (the
// network poller) and nanosleep (the runtime's monitor).
// It fails the test when it can read none of their syscall files
// (reading them needs ptrace permission on the daemon): every other check
// on them would then pass without looking.
func busyThreads(t *testing.T, pid int) int {
	t.Helper()
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	read := 0 // threads in a system call whose file could be read
	parked := len(blockedIn(pid, func(nr int, _, _ uint64) bool {
		read++
		switch nr {
		case unix.SYS_FUTEX, unix.SYS_EPOLL_PWAIT, unix.SYS_NANOSLEEP, unix.SYS_CLOCK_NANOSLEEP:
			return true
		}
		return false
	}))
	if read == 0 {
		t.Fatalf("cannot read the system calls of the daemon's threads (/proc/%d/task/*/syscall)", pid)
	}
	return len(tasks) - parked
}

// TestSharedStorageWriteSignal: with -sharedstorage, a write that waits
// for the internal byte-range locks (held here by another open file
// description) and whose caller catches a signal meanwhile goes on
// waiting and succeeds once the holder lets go, as a write to a local
// file does, instead of failing with EINTR. Only a dying caller ends the
// wait, also one killed after the caught signal (the kernel then sends no
// second FUSE_INTERRUPT, and waits for the reply of a WRITE in D state).
func TestSharedStorageWriteSignal(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	// waitingWriter starts a writer that waits for a held lock and sends
	// it a SIGALRM while it waits. exited receives the writer's exit code
	// once every thread of it has ended.
	waitingWriter := func(t *testing.T) (cmd *exec.Cmd, exited <-chan int, release func()) {
		release = holdLockFrom(t, backingFile(t, dir), unix.F_OFD_SETLK, contentio.LockBase)
		cmd = startProbe(t, "writesig", p)
		tids := waitBlockedIn(t, cmd, 1, inWrite)
		c := make(chan int, 1)
		go func() {
			err := cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				c <- ee.ExitCode()
			} else {
				c <- 0
			}
		}()
		if err := unix.Tgkill(cmd.Process.Pid, tids[0], unix.SIGALRM); err != nil {
			t.Fatal(err)
		}
		// The daemon gets FUSE_INTERRUPT within milliseconds; a write
		// that gave up on it would have ended by now.
		select {
		case code := <-c:
			t.Errorf("the writer ended (exit %d; %d is EINTR) while the lock was still held: a caught signal ended its wait", code, probeEINTR)
			c <- code
		case <-time.After(time.Second):
		}
		return cmd, c, release
	}
	t.Run("caught", func(t *testing.T) {
		_, exited, release := waitingWriter(t)
		release()
		if got := <-exited; got != probeGot {
			t.Errorf("write after a caught signal and the release: exit %d, want %d (written; %d is EINTR)", got, probeGot, probeEINTR)
		}
	})
	// A SIGKILL after the caught signal brings no second FUSE_INTERRUPT,
	// and the kernel lets the caller go only with the daemon's reply:
	// the daemon must still notice that the caller is dying.
	t.Run("then-SIGKILL", func(t *testing.T) {
		cmd, exited, release := waitingWriter(t)
		cmd.Process.Kill()
		// Well below the lock timeout (30 s), which also ends the wait.
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("a writer killed after a caught signal was still there (state %s) 10 s later, while the lock was held", procState(cmd.Process.Pid))
			release()
			<-exited
		}
		release()
	})
}

// TestSharedStorageWaitEnds: with -sharedstorage, a write that waits for
// the internal byte-range locks (held here by another open file
// description) also ends at once, while the lock is still held, when its
// caller gets a signal that dumps core by default (the kernel does not
// turn those into a pending SIGKILL; here SIGQUIT to dd, which does not
// catch it), and when the connection is aborted (the caller got ENOTCONN
// and lives on: the daemon must not wait for the lock before it can
// exit).
func TestSharedStorageWaitEnds(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	// waitingDD starts dd writing to the start of the file while the
	// lock is held; exited is closed when dd has ended.
	waitingDD := func(t *testing.T) (cmd *exec.Cmd, exited <-chan struct{}, release func()) {
		release = holdLockFrom(t, backingFile(t, dir), unix.F_OFD_SETLK, contentio.LockBase)
		cmd = exec.Command("sh", "-c", `ulimit -c 0; exec dd if=/dev/zero of="$1" bs=4 count=1 conv=notrunc status=none`, "sh", p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := make(chan struct{})
		go func() { cmd.Wait(); close(c) }()
		waitBlockedIn(t, cmd, 1, inWrite)
		return cmd, c, release
	}
	// Well below the lock timeout (30 s), which also ends the wait.
	const bound = 10 * time.Second
	t.Run("SIGQUIT", func(t *testing.T) {
		cmd, exited, release := waitingDD(t)
		defer release()
		cmd.Process.Signal(unix.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(bound):
			t.Errorf("dd killed by SIGQUIT was still there (state %s) %v later, while the lock was held", procState(cmd.Process.Pid), bound)
			release()
			<-exited
		}
	})
	t.Run("abort", func(t *testing.T) {
		pid := daemonPid(t, mnt)
		if pid == 0 {
			t.Fatal("daemon not found")
		}
		release := holdLockFrom(t, backingFile(t, dir), unix.F_OFD_SETLK, contentio.LockBase)
		defer release()
		// A caller that lives on after its write failed.
		cmd := startProbe(t, "writestay", p)
		waitBlockedIn(t, cmd, 1, inWrite)
		if err := os.WriteFile(testutil.ConnAbortFile(t, mnt), []byte("1"), 0); err != nil {
			t.Fatal(err)
		}
		if !testutil.WaitFor(bound, func() bool { return procState(pid) == "gone" || procState(pid) == "Z" }) {
			t.Errorf("daemon still there (state %s) %v after its connection was aborted, while a request waited for a lock", procState(pid), bound)
		}
	})
}

// TestSharedStorageReadInterruptible: with -sharedstorage, a read waits
// for the internal byte-range locks (at contentio.LockBase and beyond) on
// the ciphertext file, which anyone who can write CIPHERDIR can hold as
// long as it likes, here another open file description of this process.
// A reader waiting for them dies at once when killed with SIGKILL (the
// daemon gets FUSE_INTERRUPT and answers), not when the holder lets go,
// and however many readers wait, the daemon's thread count stays bounded.
// Once the holder lets go, every read completes.
func TestSharedStorageReadInterruptible(t *testing.T) {
	readers := enoughWaiters(100)
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-sharedstorage")
	pid := daemonPid(t, mnt)
	if pid == 0 {
		t.Fatal("daemon not found")
	}
	t.Run("SIGKILL", func(t *testing.T) {
		p := filepath.Join(mnt, "f")
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		release := holdLockFrom(t, backingFile(t, dir), unix.F_OFD_SETLK, contentio.LockBase)
		cmd := startProbe(t, "read", p)
		waitBlockedIn(t, cmd, 1, inRead)
		cmd.Process.Kill()
		if _, stuck := awaitWaiter(t, cmd, release); stuck != "" {
			t.Errorf("a reader killed with SIGKILL was still there (state %s) until the lock holder let go", stuck)
		}
	})
	t.Run("threads", func(t *testing.T) {
		sub := filepath.Join(mnt, "many")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range readers {
			if err := os.WriteFile(filepath.Join(sub, strconv.Itoa(i)), []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var releases []func()
		for _, p := range backingFiles(t, onlySubdir(t, dir)) {
			releases = append(releases, holdLockFrom(t, p, unix.F_OFD_SETLK, contentio.LockBase))
		}
		if len(releases) != readers {
			t.Fatalf("%d ciphertext files, want %d", len(releases), readers)
		}
		cmd := startProbe(t, "reads", sub)
		waitBlockedIn(t, cmd, readers, inRead)
		checkThreadsBounded(t, pid, readers)
		for _, r := range releases {
			r()
		}
		if got := probeExit(t, cmd, testutil.RunTimeout); got != probeGot {
			t.Errorf("readers after the release: exit %d, want %d", got, probeGot)
		}
	})
}

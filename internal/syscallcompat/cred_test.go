//go:build linux

package syscallcompat

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAsCaller creates entries as another identity: they belong to it,
// its supplementary groups grant access, permissions are checked against
// it, and the daemon's own identity is back afterwards.
func TestAsCaller(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := t.TempDir()
	// t.TempDir and its parent are 0700: let the other identity in.
	must(t, unix.Chmod(filepath.Dir(dir), 0o755))
	must(t, unix.Chmod(dir, 0o755))
	open := filepath.Join(dir, "open")
	grp := filepath.Join(dir, "grp")
	for _, d := range []string{open, grp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must(t, unix.Chmod(open, 0o777))
	must(t, unix.Chown(grp, 0, 4321))
	must(t, unix.Chmod(grp, 0o070))
	create := func(p string) func() error {
		return func() error {
			fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}
	}
	owner := func(p string) (uint32, uint32) {
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		return st.Uid, st.Gid
	}
	c := Cred{Uid: 1234, Gid: 5678}
	must(t, AsCaller(c, create(filepath.Join(open, "a"))))
	if u, g := owner(filepath.Join(open, "a")); u != 1234 || g != 5678 {
		t.Errorf("created as %d:%d, want 1234:5678", u, g)
	}
	if err := AsCaller(c, create(filepath.Join(grp, "b"))); !errors.Is(err, syscall.EACCES) {
		t.Errorf("create without group membership: %v, want EACCES", err)
	}
	c.Groups = []uint32{4321}
	must(t, AsCaller(c, create(filepath.Join(grp, "c"))))
	// fn's error is passed through.
	if err := AsCaller(c, func() error { return syscall.EROFS }); err != syscall.EROFS {
		t.Errorf("fn error: %v", err)
	}
	// Back to root on every thread: many creates from many goroutines.
	done := make(chan error)
	for i := range 8 {
		go func() {
			p := filepath.Join(dir, "root"+string(rune('0'+i)))
			if err := create(p)(); err != nil {
				done <- err
				return
			}
			if u, g := owner(p); u != 0 || g != 0 {
				done <- errors.New(p + ": not created as root")
				return
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// threadFsuid returns the filesystem uid of thread tid of this process
// (the fourth field of the Uid line of its status), or ok=false when the
// thread no longer exists.
func threadFsuid(t *testing.T, tid int) (fsuid string, ok bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "Uid:" {
			return f[4], true
		}
	}
	t.Fatalf("no Uid line in the status of thread %d", tid)
	return "", false
}

// TestAsCallerPanic: a panic inside fn reaches AsCaller's caller, and the
// thread that ran fn has the daemon's identity again (or is gone).
func TestAsCallerPanic(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	var tid int
	func() {
		defer func() {
			if v := recover(); v != "injected" {
				t.Errorf("recovered %v, want the panic of fn", v)
			}
		}()
		AsCaller(Cred{Uid: 1234, Gid: 5678}, func() error {
			tid = unix.Gettid()
			if fsuid, _ := threadFsuid(t, tid); fsuid != "1234" {
				t.Errorf("fsuid inside fn: %s", fsuid)
			}
			panic("injected")
		})
		t.Error("AsCaller returned after a panic in fn")
	}()
	if fsuid, ok := threadFsuid(t, tid); ok && fsuid != "0" {
		t.Errorf("thread %d kept fsuid %s after a panic in fn", tid, fsuid)
	}
	// Every thread that runs Go code now has root's identity.
	checkAllThreadsRoot(t)
}

// TestAsCallerRestoreFails: when the daemon's identity cannot be restored
// (fn drops CAP_SETUID and CAP_SETGID of its thread, so setgroups fails),
// AsCaller reports it and the thread never runs anything again: Go
// terminates it.
func TestAsCallerRestoreFails(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	var tid int
	err := AsCaller(Cred{Uid: 1234, Gid: 5678}, func() error {
		tid = unix.Gettid()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return err
		}
		for _, c := range []uint{unix.CAP_SETUID, unix.CAP_SETGID} {
			data[c/32].Effective &^= 1 << (c % 32)
			data[c/32].Permitted &^= 1 << (c % 32)
		}
		return unix.Capset(&hdr, &data[0])
	})
	if err == nil || !strings.Contains(err.Error(), "restoring") {
		t.Fatalf("AsCaller: %v, want a failed restore", err)
	}
	if tid == os.Getpid() {
		// The main thread: the runtime never exits it (that would
		// look like the end of the process) but parks it for good
		// once its locked goroutine has ended.
		t.Log("fn ran on the main thread, which the runtime parks for good")
		mainParked = true
		return
	}
	// The thread exits once its goroutine has ended; until then it is
	// parked and runs nothing else.
	for i := 0; ; i++ {
		fsuid, ok := threadFsuid(t, tid)
		if !ok {
			break
		}
		if i == 1000 {
			t.Fatalf("thread %d with fsuid %s still exists (pid %d)", tid, fsuid, os.Getpid())
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkAllThreadsRoot(t)
}

// mainParked is set when TestAsCallerRestoreFails left the main thread
// parked for good with a foreign identity.
var mainParked bool

// checkAllThreadsRoot looks at every thread of the process: all have
// fsuid 0 (but a main thread that TestAsCallerRestoreFails parked).
func checkAllThreadsRoot(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || tid == os.Getpid() && mainParked {
			continue
		}
		if fsuid, ok := threadFsuid(t, tid); ok && fsuid != "0" {
			t.Errorf("thread %d has fsuid %s", tid, fsuid)
		}
	}
}

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

func TestMountPasswordFromStdin(t *testing.T) {
	dir := initFS(t)
	testutil.RequireFuse(t)
	mnt := newDir(t)
	r := runWith(t, testutil.RunOptions{Stdin: "test\n"}, dir, mnt)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	testutil.Expect(t, r, 0, "Reading Password from stdin", "Decrypting master key", "Filesystem mounted and ready.")
}

func TestMountMasterkeyFromStdin(t *testing.T) {
	key := strings.Repeat("cd", 32)
	dir := newDir(t)
	testutil.Expect(t, run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-masterkey", key, dir), 0)
	testutil.RequireFuse(t)
	mnt := newDir(t)
	r := runWith(t, testutil.RunOptions{Stdin: key + "\n"}, "-masterkey", "stdin", dir, mnt)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	testutil.Expect(t, r, 0)
	if !testutil.IsMounted(mnt) {
		t.Fatal("not mounted")
	}
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "nothex\n"}, "-masterkey", "stdin", dir, newDir(t)), 14)
}

func TestQuietAndDebug(t *testing.T) {
	dir := newDir(t)
	r := run(t, "-init", "-q", "-scryptn", "10", "-extpass", "echo test", dir)
	testutil.Expect(t, r, 0)
	if r.Stdout != "" {
		t.Errorf("-q init printed %q", r.Stdout)
	}
	testutil.RequireFuse(t)
	mnt := newDir(t)
	r = run(t, "-d", "-openssl=false", "-nosyslog", "-extpass", "echo test", dir, mnt)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	testutil.Expect(t, r, 0, "backend=Go")
	mnt2 := newDir(t)
	r = run(t, "-q", "-extpass", "echo test", dir, mnt2)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt2) })
	testutil.Expect(t, r, 0)
	if r.Stdout != "" {
		t.Errorf("-q mount printed %q", r.Stdout)
	}
}

func TestProfilingFlags(t *testing.T) {
	dir := initFS(t)
	tmp := t.TempDir()
	cpu, mem, tr := filepath.Join(tmp, "cpu"), filepath.Join(tmp, "mem"), filepath.Join(tmp, "trace")
	testutil.Expect(t, run(t, "-cpuprofile", cpu, "-memprofile", mem, "-trace", tr, "-info", dir), 0)
	for _, f := range []string{cpu, mem, tr} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	testutil.Expect(t, run(t, "-memprofile", "/nonexistent/x", "-info", dir), 25)
	testutil.Expect(t, run(t, "-trace", "/nonexistent/x", "-info", dir), 25)
}

// TestReadOnlyBackingStore mounts a CIPHERDIR that lives on a read-only
// tmpfs: the mount must become read-only, and -rw must fail.
func TestReadOnlyBackingStore(t *testing.T) {
	testutil.RequireFuse(t)
	base := newDir(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", base).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		// The gocryptfs process may still hold CIPHERDIR open for a moment
		// after its mount went away.
		if !testutil.WaitFor(5*time.Second, func() bool { return exec.Command("umount", base).Run() == nil }) {
			exec.Command("umount", "-l", base).Run()
		}
	})
	dir := filepath.Join(base, "cipher")
	os.Mkdir(dir, 0o700)
	testutil.Expect(t, run(t, "-init", "-q", "-scryptn", "10", "-extpass", "echo test", dir), 0)
	if out, err := exec.Command("mount", "-o", "remount,ro", base).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	mnt := newDir(t)
	testutil.Expect(t, run(t, "-rw", "-extpass", "echo test", dir, mnt), 1)
	r := run(t, "-extpass", "echo test", dir, mnt)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	testutil.Expect(t, r, 0, "Cipherdir "+dir+" is on a read-only filesystem, mounting as read-only.")
	if line := testutil.MountLine(mnt); !strings.Contains(line, " ro,") {
		t.Errorf("not mounted read-only: %s", line)
	}
}

// TestIdleBusyCwd: a process with its working directory inside the mount
// keeps an idle filesystem mounted (the unmount attempt fails and is retried).
func TestIdleBusyCwd(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-i", "500ms")
	sleeper := exec.Command("sleep", "3")
	sleeper.Dir = mnt
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Wait()
	if testutil.WaitFor(2*time.Second, func() bool { return !testutil.IsMounted(mnt) }) {
		t.Fatal("unmounted although a process has its cwd inside")
	}
	sleeper.Wait()
	if !testutil.WaitFor(6*time.Second, func() bool { return !testutil.IsMounted(mnt) }) {
		t.Fatal("not unmounted after the process left")
	}
}

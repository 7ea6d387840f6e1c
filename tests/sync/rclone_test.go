package sync_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// rcloneStopTimeout bounds how long a cleanup waits for an rclone
// process to exit after it was told to.
const rcloneStopTimeout = 15 * time.Second

// startRcloneServe serves dir over WebDAV with Debian's rclone on
// 127.0.0.1 only, on a free port, without authentication (nothing else
// listens there), and returns a config file that names it as the remote
// "wd:". rclone has no update check or telemetry; the config file is the
// test's own, so the user's rclone.conf is never read. The server is
// killed in t.Cleanup.
func startRcloneServe(t *testing.T, dir string) string {
	t.Helper()
	rclone := need(t, "rclone")
	port := freePort(t)
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	cfg := fmt.Sprintf("[wd]\ntype = webdav\nurl = http://127.0.0.1:%d/\nvendor = other\n", port)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rclone, "serve", "webdav", "--config", conf, "--addr", fmt.Sprintf("127.0.0.1:%d", port), dir)
	var logs testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := testutil.WaitExit(cmd, rcloneStopTimeout); err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("rclone serve: %v", err)
		}
		if t.Failed() {
			t.Logf("rclone serve log:\n%s", logs.String())
		}
	})
	waitListening(t, port, "rclone serve webdav", &logs)
	return conf
}

// mountRclone mounts the remote "wd:" of conf with rclone mount
// --vfs-cache-mode writes (the usual way to keep a CIPHERDIR in the
// cloud) on a new directory, with a fresh cache, and returns it. The
// returned function unmounts it and waits for rclone to exit (it uploads
// what is still cached first); t.Cleanup calls it too.
func mountRclone(t *testing.T, conf string) (string, func()) {
	t.Helper()
	rclone := need(t, "rclone")
	mnt := testutil.NewDir(t, "rclone")
	cmd := exec.Command(rclone, "mount", "--config", conf, "--cache-dir", t.TempDir(),
		"--vfs-cache-mode", "writes", "wd:", mnt)
	var logs testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		testutil.UnmountDir(t, mnt)
		// Unmounted, rclone exits by itself; SIGTERM in case it did not
		// notice (it unmounts on SIGTERM too).
		cmd.Process.Signal(syscall.SIGTERM)
		if err := testutil.WaitExit(cmd, rcloneStopTimeout); err != nil && !isExitErr(err) {
			t.Errorf("rclone mount: %v", err)
		}
		if t.Failed() {
			t.Logf("rclone mount log:\n%s", logs.String())
		}
	}
	t.Cleanup(stop)
	if !testutil.WaitFor(20*time.Second, func() bool { return testutil.IsMounted(mnt) }) {
		stop()
		t.Fatalf("rclone mount did not mount %s: %s", mnt, logs.String())
	}
	return mnt, stop
}

// sameFiles reports whether every regular file below a is in b with the
// same size.
func sameFiles(a, b string) bool {
	ok := true
	err := filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		sa, err1 := os.Stat(p)
		sb, err2 := os.Stat(filepath.Join(b, rel))
		if err1 != nil || err2 != nil || sa.Size() != sb.Size() {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok && err == nil
}

// isExitErr reports whether err only says that the process exited
// non-zero or by a signal (expected after SIGTERM).
func isExitErr(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// TestRcloneMount keeps a CIPHERDIR on a WebDAV remote through rclone
// mount (served by rclone itself on 127.0.0.1): create, write, rename,
// delete and mkdir work and read back byte for byte after remounting
// both gocryptfs and rclone (fresh cache, so the bytes came from the
// server); what rclone cannot store (symlinks, xattrs, modes, FIFOs)
// fails or is dropped as listed in the README; and -fsck says once that
// the storage has no xattrs instead of calling every file corrupt.
func TestRcloneMount(t *testing.T) {
	testutil.RequireFuse(t)
	backing := testutil.NewDir(t, "webdav")
	conf := startRcloneServe(t, backing)
	rmnt, stopRclone := mountRclone(t, conf)
	cipherdir := filepath.Join(rmnt, "cipher")
	if err := os.Mkdir(cipherdir, 0o700); err != nil {
		t.Fatal(err)
	}
	pass := []string{"-extpass", "echo test"}
	r := testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, append([]string{"-init", "-scryptn", "10"}, append(pass, cipherdir)...)...)
	testutil.Expect(t, r, 0, "network filesystem (fuse.rclone)")
	plain := testutil.MountFS(t, gocryptfsBin, cipherdir, append([]string{"-q"}, pass...)...)
	big := make([]byte, 300*1024+17)
	for i := range big {
		big[i] = byte(i*31 + i/4096)
	}
	want := map[string][]byte{
		"big.bin":                         big,
		"dir/sub/note.txt":                []byte("in a subdirectory\n"),
		"renamed.txt":                     []byte("renamed\n"),
		"dir/" + strings.Repeat("L", 200): []byte("long name\n"),
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s on rclone: %v", what, err)
		}
	}
	must("mkdir", os.MkdirAll(filepath.Join(plain, "dir/sub"), 0o755))
	for p, data := range want {
		src := p
		if p == "renamed.txt" {
			src = "before-rename.txt"
		}
		must("write "+src, os.WriteFile(filepath.Join(plain, src), data, 0o644))
	}
	must("rename", os.Rename(filepath.Join(plain, "before-rename.txt"), filepath.Join(plain, "renamed.txt")))
	must("create", os.WriteFile(filepath.Join(plain, "deleted.txt"), []byte("x"), 0o644))
	must("delete", os.Remove(filepath.Join(plain, "deleted.txt")))
	must("mkdir", os.Mkdir(filepath.Join(plain, "emptydir"), 0o755))
	// What WebDAV through rclone cannot store. Each failure is logged;
	// the README lists them. A success would mean a newer rclone learned
	// it: then the README needs updating, so it fails the test.
	for what, err := range map[string]error{
		"symlink":  os.Symlink("renamed.txt", filepath.Join(plain, "link")),
		"setxattr": unix.Setxattr(filepath.Join(plain, "renamed.txt"), "user.test", []byte("v"), 0),
		"hardlink": os.Link(filepath.Join(plain, "renamed.txt"), filepath.Join(plain, "hardlink")),
		"mkfifo":   unix.Mkfifo(filepath.Join(plain, "fifo"), 0o644),
	} {
		if err == nil {
			t.Errorf("%s on rclone succeeded: update the README's rclone section", what)
		} else {
			t.Logf("%s on rclone: %v (expected)", what, err)
		}
	}
	if st, err := os.Lstat(filepath.Join(plain, "fifo")); err == nil {
		// rclone creates a regular file before it fails the mknod.
		t.Logf("after the failed mkfifo, fifo is left as %v", st.Mode())
		must("remove fifo leftover", os.Remove(filepath.Join(plain, "fifo")))
	}
	must("chmod", os.Chmod(filepath.Join(plain, "renamed.txt"), 0o600))
	if st, err := os.Stat(filepath.Join(plain, "renamed.txt")); err == nil {
		t.Logf("mode after chmod 600 on rclone: %o (rclone keeps no modes)", st.Mode().Perm())
	}
	testutil.UnmountDir(t, plain)
	// The same CIPHERDIR through a new rclone mount with an empty cache.
	// rclone uploads a closed file after --vfs-write-back (5 s) and, when
	// stopped before, only on its next start with the same cache: wait
	// until the server has every file, as a user must before stopping it.
	if !testutil.WaitFor(60*time.Second, func() bool { return sameFiles(rmnt, backing) }) {
		t.Fatal("rclone did not upload the CIPHERDIR within 60 s")
	}
	stopRclone()
	rmnt, _ = mountRclone(t, conf)
	cipherdir = filepath.Join(rmnt, "cipher")
	plain = testutil.MountFS(t, gocryptfsBin, cipherdir, append([]string{"-q"}, pass...)...)
	for p, data := range want {
		got, err := os.ReadFile(filepath.Join(plain, p))
		if err != nil {
			t.Errorf("read back %s: %v", p, err)
		} else if !bytes.Equal(got, data) {
			t.Errorf("read back %s: %d bytes differ from the %d written", p, len(got), len(data))
		}
	}
	for _, gone := range []string{"before-rename.txt", "deleted.txt"} {
		if _, err := os.Lstat(filepath.Join(plain, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want gone", gone, err)
		}
	}
	if st, err := os.Stat(filepath.Join(plain, "emptydir")); err != nil || !st.IsDir() {
		t.Errorf("emptydir: %v", err)
	}
	testutil.UnmountDir(t, plain)
	r = testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, append([]string{"-fsck"}, append(pass, cipherdir)...)...)
	testutil.Expect(t, r, 0, "fsck summary: no problems found")
	out := r.Stdout + r.Stderr
	if n := strings.Count(out, "cannot list extended attributes"); n != 1 {
		t.Errorf("-fsck on rclone: want the xattr warning once, got it %d times: %v", n, r)
	}
	if strings.Contains(out, "corrupt") {
		t.Errorf("-fsck on rclone reports corruption: %v", r)
	}
}

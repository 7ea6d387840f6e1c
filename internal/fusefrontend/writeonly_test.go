//go:build linux

package fusefrontend

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// The ordinary user mountAsUser serves as: nobody, who has a passwd entry
// (fusermount3 -u needs one).
const userUid, userGid = 65534, 65534

// Environment of the unprivileged copy of the test binary that
// mountAsUser starts: the mount point and CIPHERDIR. The FUSE fd is fd 3.
const (
	asUserMntEnv    = "GOCRYPTFS_TEST_AS_USER_MNT"
	asUserCipherEnv = "GOCRYPTFS_TEST_AS_USER_CIPHER"
)

// mountAsUser lets the current test run with the filesystem daemon being
// an ordinary user (nobody), which is what it is without
// -allow_other as root. Run as root, it acts as the privileged parent of
// the /dev/fd/N convention (libfuse, go-fuse): it opens /dev/fuse, mounts
// it on a fresh directory owned by the user and re-runs the current test in
// a copy of the test binary under the user's ids, handing the fd down;
// then it returns nil and the caller returns (the copy's verdict is the
// test's). In that copy (or when not root in the first place) it serves
// the filesystem as the user and returns it mounted. This needs neither
// fusermount3 nor access to /dev/fuse for the user.
func mountAsUser(t *testing.T) *testFS {
	t.Helper()
	testutil.RequireFuse(t)
	if mnt := os.Getenv(asUserMntEnv); mnt != "" {
		return serveAsUser(t, mnt, os.Getenv(asUserCipherEnv))
	}
	if os.Geteuid() != 0 {
		return mountFS(t, testConfig{})
	}
	base := plainDir(t)
	mnt, cipher := filepath.Join(base, "mnt"), filepath.Join(base, "cipher")
	for _, d := range []string{mnt, cipher} {
		must(t, os.Mkdir(d, 0o755))
		must(t, os.Chown(d, userUid, userGid))
	}
	// The go test build directory is private to root: copy the binary
	// where the user can execute it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "fusefrontend.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(bin, data, 0o755))
	fuseFd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fuseFile := os.NewFile(uintptr(fuseFd), "/dev/fuse")
	defer fuseFile.Close()
	opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", fuseFd, userUid, userGid)
	if err := unix.Mount("gocryptfs-test", mnt, "fuse.gocryptfs-test", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		t.Fatal("mount:", err)
	}
	t.Cleanup(func() {
		if testutil.IsMounted(mnt) {
			if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
				t.Error("unmount:", err)
			}
		}
	})
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), asUserMntEnv+"="+mnt, asUserCipherEnv+"="+cipher, "HOME="+base)
	cmd.ExtraFiles = []*os.File{fuseFile} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: userUid, Gid: userGid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", userUid, err, out)
	}
	t.Logf("as uid %d:\n%s", userUid, out)
	return nil
}

// serveAsUser is mountAsUser's unprivileged side: it serves a fresh
// filesystem in cipher on the FUSE fd 3, which the parent mounted on mnt.
func serveAsUser(t *testing.T, mnt, cipher string) *testFS {
	core := coretest.New(t, coretest.Options{MasterKey: make([]byte, cryptocore.KeyLen), HKDF: true,
		Names: nametransform.Options{Raw64: true}})
	fd, err := unix.Open(cipher, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = nametransform.WriteDirIVAt(fd)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	rn, err := NewRootNode(Args{CipherDir: cipher, Logger: logs.Logger(slog.LevelDebug)}, core.NT, core.CE)
	if err != nil {
		t.Fatal(err)
	}
	opts := mountopts.Build(mountopts.Params{CipherDir: cipher, SharedStorage: true})
	srv, err := fuseserve.Mount("/dev/fd/3", rn, opts, fuseserve.Options{})
	if err != nil {
		t.Fatal("serve:", err)
	}
	tellNoPoll(t, mnt)
	t.Cleanup(func() {
		// The server does not know the real mount point; a user may
		// unmount their own FUSE mount with fusermount3. If that fails
		// the parent unmounts it once this process is gone.
		if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
			t.Logf("fusermount3 -u: %v: %s", err, out)
		} else {
			srv.Wait()
		}
		rn.Close()
		if t.Failed() {
			t.Logf("filesystem log:\n%s", logs.String())
		}
	})
	return &testFS{mnt: mnt, cipher: cipher, rn: rn, srv: srv, logs: logs}
}

// tellNoPoll makes the kernel learn that the filesystem has no poll
// support before this process opens files on its own mount. Go's os
// package adds every opened file to its epoll set; on a FUSE file that
// epoll_ctl sends a POLL request, made by the runtime without giving up
// its P, so with a few of them at once nothing is left to serve the
// request and the process hangs. go-fuse answers POLL with ENOSYS (after
// which the kernel stops asking) and triggers one itself at mount time,
// but not for a /dev/fd/N mount, whose real path it does not know: do
// it here the same way, on go-fuse's reserved name.
func tellNoPoll(t *testing.T, mnt string) {
	t.Helper()
	fd, err := unix.Open(filepath.Join(mnt, ".go-fuse-epoll-hack"), unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLPRI | unix.POLLOUT}}, 0)
}

// TestWriteOnlyConcurrentOpens opens one write-only (0200) file many
// times concurrently through a mount served by an unprivileged user, who
// can only open it for the read-modify-write that writes need by adding
// owner-read permission for a moment: no open may fail, and the file must
// be left with its mode. (Run as root, the test re-runs itself as an
// ordinary user.)
func TestWriteOnlyConcurrentOpens(t *testing.T) {
	tf := mountAsUser(t)
	if tf == nil {
		return // ran as the user in a child process
	}
	p := tf.path("wo")
	mustWrite(t, p, pattern(5000, 1))
	if err := os.Chmod(p, 0o200); err != nil {
		t.Fatal(err)
	}
	const workers, opens = 16, 150
	var mu sync.Mutex
	failed := 0
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range opens {
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteAt([]byte("x"), 4095)
					err = errors.Join(err, f.Close())
				}
				if err != nil {
					mu.Lock()
					failed++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d of %d opens failed, first: %v", failed, workers*opens, firstErr)
	}
	if st := statOf(t, p); st.Mode&0o7777 != 0o200 {
		t.Errorf("mode after the opens: %04o, want 0200", st.Mode&0o7777)
	}
	c, err := tf.rn.EncryptPath("wo")
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(tf.cipher, c), &st); err != nil || st.Mode&0o7777 != 0o200 {
		t.Errorf("backing mode after the opens: %04o (%v), want 0200", st.Mode&0o7777, err)
	}
}

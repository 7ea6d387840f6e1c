//go:build linux

package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// TestAllowOtherSetgid mounts with the binary as root with -allow_other
// (and with -acl): entries another user creates in a set-group-ID
// directory get the directory's group, new directories also the bit, as
// on a local filesystem.
func TestAllowOtherSetgid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, extra := range [][]string{nil, {"-acl"}} {
		t.Run(filepath.Join(append([]string{"flags"}, extra...)...), func(t *testing.T) {
			dir := initFS(t)
			mnt := mountFS(t, dir, append([]string{"-extpass", "echo test", "-allow_other"}, extra...)...)
			// t.TempDir, its parent and the new filesystem's root are
			// private to root.
			for _, d := range []string{mnt, filepath.Dir(mnt), filepath.Dir(filepath.Dir(mnt))} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			sg := filepath.Join(mnt, "sg")
			if err := os.Mkdir(sg, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(sg, 0, 4321); err != nil {
				t.Fatal(err)
			}
			if err := unix.Chmod(sg, 0o2777); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/bin/sh", "-c", "umask 022 && touch f && mkdir d && mkfifo p && ln -s f s")
			cmd.Dir = sg
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1234, Gid: 5678}}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for n, wantMode := range map[string]uint32{"f": 0o644, "d": 0o2755, "p": 0o644, "s": 0} {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(sg, n), &st); err != nil {
					t.Fatal(err)
				}
				if st.Uid != 1234 || st.Gid != 4321 {
					t.Errorf("%s: owner %d:%d, want 1234:4321", n, st.Uid, st.Gid)
				}
				if wantMode != 0 && st.Mode&0o7777 != wantMode {
					t.Errorf("%s: mode %04o, want %04o", n, st.Mode&0o7777, wantMode)
				}
			}
		})
	}
}

// Users of the multi-user tests (they need not exist in /etc/passwd).
const (
	userA = 10000
	userB = 10001
)

// TestAllowOtherCreateExistingAsCaller (issue 19, finding 2): a CREATE
// whose exclusive creation meets an entry that appeared after the
// kernel's lookup must open it with the caller's rights. Two mounts of one
// CIPHERDIR under -allow_other (with and without -sharedstorage): user B
// keeps creating and removing a private 0600 file through the second
// mount, user A opens the same name with O_CREAT (O_RDWR, and
// O_WRONLY|O_TRUNC) through the first one a fixed number of times. A must
// never get a handle to B's file; the refused attempts (EACCES) show that
// the race was run into.
func TestAllowOtherCreateExistingAsCaller(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, extra := range [][]string{nil, {"-sharedstorage"}} {
		t.Run(filepath.Join(append([]string{"flags"}, extra...)...), func(t *testing.T) {
			dir := initFS(t)
			args := append([]string{"-extpass", "echo test", "-allow_other"}, extra...)
			mntA := mountFS(t, dir, args...)
			mntB := mountFS(t, dir, args...)
			openForUsers(t, mntA)
			openForUsers(t, mntB)
			mkdirFor(t, filepath.Join(mntA, "shared"), 0)
			stop := filepath.Join(t.TempDir(), "stop")
			os.Chmod(filepath.Dir(stop), 0o755)
			victim := startUserJob(t, userB, userJob{Kind: "churn", Path: filepath.Join(mntB, "shared/x"), StopFile: stop})
			var results []userResult
			for _, flags := range []int{syscall.O_RDWR, syscall.O_WRONLY | syscall.O_TRUNC} {
				a := startUserJob(t, userA, userJob{Kind: "steal", Path: filepath.Join(mntA, "shared/x"), Flags: flags, Count: 3000})
				results = append(results, a.wait(t))
			}
			must(t, os.WriteFile(stop, nil, 0o644))
			victim.wait(t)
			for i, r := range results {
				what := []string{"O_RDWR|O_CREAT", "O_WRONLY|O_CREAT|O_TRUNC"}[i]
				t.Logf("%s: %d handles to B's file, %d refused, %d own files, %d tries, other failures %v", what, r.Foreign, r.EACCES, r.Own, r.Tries, r.Other)
				if r.Foreign != 0 {
					t.Errorf("%s: user A got %d handles to user B's private file", what, r.Foreign)
				}
				if r.Foreign+r.EACCES == 0 {
					t.Errorf("%s: the race was never run into in %d tries (%v)", what, r.Tries, stealPatience)
				}
				if len(r.Errors) > 0 {
					t.Errorf("%s: %q", what, r.Errors)
				}
			}
		})
	}
}

// TestAllowOtherUsersClose (issue 19, finding 4): 4 and 16 unprivileged
// users at once under -allow_other (with and without -sharedstorage), each
// 100 times: mkdir -p d/foo/bar/baz, create foo (0400, empty) and bar
// (0400, 21 bytes) with O_WRONLY|O_CREAT|O_TRUNC, write, close, unlink
// foo, mkdir foo, read bar back. No call may fail; before the fix one
// close(2) in about 400 returned EIO (a new file inherited the kernel
// inode of a just unlinked one, whose number the backing filesystem had
// handed out again, with the write error recorded on it).
func TestAllowOtherUsersClose(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, users := range []int{4, 16} {
		for _, extra := range [][]string{nil, {"-sharedstorage"}} {
			name := filepath.Join(append([]string{fmt.Sprintf("users=%d", users)}, extra...)...)
			t.Run(name, func(t *testing.T) {
				dir := initFS(t)
				mnt := mountFS(t, dir, append([]string{"-extpass", "echo test", "-allow_other"}, extra...)...)
				openForUsers(t, mnt)
				var procs []*userProc
				for u := range users {
					d := filepath.Join(mnt, fmt.Sprintf("u%d", u))
					mkdirFor(t, d, userA+u)
					procs = append(procs, startUserJob(t, uint32(userA+u), userJob{Kind: "multi", Dir: d, Count: 100}))
				}
				for _, p := range procs {
					if r := p.wait(t); len(r.Errors) > 0 {
						t.Errorf("%d failed calls: %q", len(r.Errors), r.Errors)
					}
				}
			})
		}
	}
}

// TestSingleUserLoopAfterOthers (issue 19, finding 4): on a mount with
// -zerokey -plaintextnames -openssl=false, after other work (the
// multi-user loop, files unlinked while open for reading), 100 times:
// create with O_RDWR|O_CREAT|O_TRUNC 0666, write 10 bytes, close, open,
// read, close. No call may fail (the issue saw close(2) fail with EIO
// when this ran after other tests).
func TestSingleUserLoopAfterOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := newDir(t)
	testutil.Expect(t, run(t, "-init", "-q", "-scryptn", "10", "-extpass", "echo test", "-zerokey", "-plaintextnames", dir), 0)
	mnt := mountFS(t, dir, "-zerokey", "-plaintextnames", "-openssl=false")
	// Earlier work: four loops at once, and read-only descriptors of
	// files that are unlinked before they are closed.
	var procs []*userProc
	for u := range 4 {
		d := filepath.Join(mnt, fmt.Sprintf("u%d", u))
		mkdirFor(t, d, 0)
		procs = append(procs, startUserJob(t, 0, userJob{Kind: "multi", Dir: d, Count: 25}))
	}
	for i := range 50 {
		p := filepath.Join(mnt, fmt.Sprintf("gone%d", i))
		must(t, os.WriteFile(p, []byte("earlier file"), 0o644))
		f, err := os.Open(p)
		must(t, err)
		must(t, os.Remove(p))
		if err := f.Close(); err != nil {
			t.Errorf("close of an unlinked file: %v", err)
		}
	}
	for _, p := range procs {
		if r := p.wait(t); len(r.Errors) > 0 {
			t.Errorf("earlier work: %d failed calls: %q", len(r.Errors), r.Errors)
		}
	}
	d := filepath.Join(mnt, "single")
	mkdirFor(t, d, 0)
	r := startUserJob(t, 0, userJob{Kind: "single", Dir: d, Count: 100}).wait(t)
	if len(r.Errors) > 0 {
		t.Errorf("%d failed calls: %q", len(r.Errors), r.Errors)
	}
}

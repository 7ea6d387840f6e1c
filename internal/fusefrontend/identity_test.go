package fusefrontend

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
	"gocryptfs/internal/testutil"
)

// Identities used by the multi-user tests. None of them needs to exist in
// /etc/passwd; the caller is not a member of sharedGid.
const (
	callerUid = 1234
	callerGid = 5678
	sharedGid = 4321
)

// mountAllowOther mounts a fresh CIPHERDIR as root with AllowOther and
// default_permissions, as `gocryptfs -allow_other` does, optionally with
// POSIX ACLs (-acl), and makes the mount point reachable for other users.
func mountAllowOther(t *testing.T, acl bool) *testFS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	testutil.RequireFuse(t)
	cipher := t.TempDir()
	os.Chmod(cipher, 0o777)
	// AllowOther gives allow_other and default_permissions (package
	// mountopts); -acl only adds EnableAcl.
	tf := mountExistingOpts(t, testConfig{args: Args{AllowOther: true}}, cipher, true, func(o *fuse.MountOptions) {
		o.EnableAcl = acl
	})
	os.Chmod(filepath.Dir(tf.mnt), 0o755)
	return tf
}

// plainDir returns an empty directory on the backing filesystem that
// other users can reach, for side-by-side comparisons.
func plainDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	os.Chmod(filepath.Dir(d), 0o755)
	os.Chmod(d, 0o777)
	return d
}

// runAs runs script with /bin/sh in dir as uid:gid with the supplementary
// groups given, with umask 022.
//
// The shell changes into dir itself: with cmd.Dir the forked child would
// chdir into the mount before exec, while Go's vfork keeps the parent
// thread stopped, and a garbage collection waiting for that thread then
// stops the FUSE server the chdir waits for (a deadlock).
func runAs(dir string, uid, gid uint32, groups []uint32, script string) ([]byte, error) {
	cmd := exec.Command("/bin/sh", "-c", `cd "$0" && umask 022 && `+script, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: groups}}
	return cmd.CombinedOutput()
}

// ownerModes lstats names in dir and renders uid, gid and (except for
// symlinks, whose mode means nothing) the permission bits of each.
func ownerModes(t *testing.T, dir string, names []string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, n), &st); err != nil {
			t.Fatal(err)
		}
		mode := st.Mode & 0o7777
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			mode = 0
		}
		out[n] = fmt.Sprintf("%d:%d %04o", st.Uid, st.Gid, mode)
	}
	return out
}

// TestSetgidDirAllowOther creates entries in a set-group-ID directory as
// a user who is not a member of its group, through a root-run -allow_other
// mount (with and without -acl) and side by side on a plain directory:
// files, directories, symlinks, FIFOs and device nodes (made by root with
// another primary group) get the directory's group, new
// directories also the set-group-ID bit, exactly as on the backing
// filesystem. The backing entries, the new directory's gocryptfs.diriv
// included, belong to the caller.
func TestSetgidDirAllowOther(t *testing.T) {
	for _, acl := range []bool{false, true} {
		t.Run(fmt.Sprintf("acl=%v", acl), func(t *testing.T) {
			tf := mountAllowOther(t, acl)
			plain := plainDir(t)
			long := strings.Repeat("L", 200) // stored under a hashed name
			names := []string{"f", "d", "s", "p", "d/sub", "d/g", "x", long, "dev"}
			script := "cd sg && touch f && mkdir d && ln -s f s && mkfifo p && mkdir d/sub && touch d/g && mkdir -m 0700 x && touch " + long
			got := make(map[string]map[string]string)
			for _, base := range []string{plain, tf.mnt} {
				sg := filepath.Join(base, "sg")
				if err := os.Mkdir(sg, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(sg, 0, sharedGid); err != nil {
					t.Fatal(err)
				}
				if err := unix.Chmod(sg, 0o2777); err != nil {
					t.Fatal(err)
				}
				if out, err := runAs(base, callerUid, callerGid, nil, script); err != nil {
					t.Fatalf("%s: %v: %s", base, err, out)
				}
				// Device nodes need CAP_MKNOD: root, with another group.
				if out, err := runAs(base, 0, callerGid, nil, "mknod sg/dev c 1 3"); err != nil {
					t.Fatalf("%s: %v: %s", base, err, out)
				}
				got[base] = ownerModes(t, sg, names)
			}
			for _, n := range names {
				if p, m := got[plain][n], got[tf.mnt][n]; p != m {
					t.Errorf("%s: plain dir %s, mount %s", n, p, m)
				}
			}
			// The plain directory must show what the test is about.
			want := map[string]string{"f": "1234:4321 0644", "d": "1234:4321 2755", "d/sub": "1234:4321 2755", "x": "1234:4321 2700", "dev": "0:4321 0644"}
			for n, w := range want {
				if got[plain][n] != w {
					t.Errorf("plain %s: %s, want %s (unexpected kernel behaviour)", n, got[plain][n], w)
				}
			}
			cd, err := tf.rn.EncryptPath("sg/d")
			if err != nil {
				t.Fatal(err)
			}
			cl, err := tf.rn.EncryptPath("sg/" + long)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{filepath.Join(cd, nametransform.DirIVFilename), cl + nametransform.LongNameSuffix} {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(tf.cipher, p), &st); err != nil || st.Uid != callerUid || st.Gid != sharedGid {
					t.Errorf("backing %s: owner %d:%d (%v), want %d:%d", p, st.Uid, st.Gid, err, callerUid, sharedGid)
				}
			}
		})
	}
}

// TestAllowOtherCreateDeniedByBacking gives a directory a backing ACL that
// denies the caller write access while its mode bits (all a mount without
// -acl shows the kernel) allow it: creating in it through the mount must
// fail with EACCES, as in a plain directory with the same ACL, because the
// entries are created with the caller's identity and not as root followed
// by a chown.
func TestAllowOtherCreateDeniedByBacking(t *testing.T) {
	tf := mountAllowOther(t, false)
	if _, err := exec.LookPath("setfacl"); err != nil {
		t.Fatal("setfacl (package acl) is missing")
	}
	plain := plainDir(t)
	if err := os.Mkdir(tf.path("deny"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tf.path("deny"), 0o777)
	cd, err := tf.rn.EncryptPath("deny")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(plain, "deny"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(plain, "deny"), 0o777)
	for _, d := range []string{filepath.Join(tf.cipher, cd), filepath.Join(plain, "deny")} {
		if out, err := exec.Command("setfacl", "-m", fmt.Sprintf("u:%d:r-x", callerUid), d).CombinedOutput(); err != nil {
			t.Fatalf("setfacl: %v: %s", err, out)
		}
	}
	for _, op := range []string{"touch deny/f", "mkdir deny/d", "ln -s x deny/s", "mkfifo deny/p"} {
		for _, base := range []string{plain, tf.mnt} {
			out, err := runAs(base, callerUid, callerGid, nil, op)
			if err == nil || !strings.Contains(string(out), "ermission denied") {
				t.Errorf("%s in %s: %v: %s; want permission denied", op, base, err, out)
			}
		}
	}
	if ents := tf.cipherEntries(t, cd); len(ents) != 1 {
		t.Errorf("backing directory holds %v, want only the IV file", ents)
	}
}

// TestSystemXattrPermissions: through a root-run -allow_other mount, a user
// may set or remove system.* attributes (stored as encrypted user.
// attributes) only on files they may write, and POSIX ACLs only on files
// they own, as the kernel rules for a local filesystem say. The ACL cases
// run side by side on a plain directory.
func TestSystemXattrPermissions(t *testing.T) {
	tf := mountAllowOther(t, false)
	plain := plainDir(t)
	for _, base := range []string{plain, tf.mnt} {
		for _, f := range []struct {
			name string
			mode uint32
			uid  int
		}{{"ro", 0o644, 0}, {"rw", 0o666, 0}, {"mine", 0o644, callerUid}} {
			p := filepath.Join(base, f.name)
			mustWrite(t, p, nil)
			must(t, unix.Chmod(p, f.mode))
			must(t, os.Chown(p, f.uid, 0))
		}
	}
	// Set by root before, to test removal.
	must(t, unix.Setxattr(tf.path("ro"), "system.gocryptfs_test", []byte("root"), 0))

	denied := func(base, script, want string) {
		t.Helper()
		out, err := runAs(base, callerUid, callerGid, nil, script)
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("%s in %s: %v: %s; want %q", script, base, err, out, want)
		}
	}
	allowed := func(base, script string) {
		t.Helper()
		if out, err := runAs(base, callerUid, callerGid, nil, script); err != nil {
			t.Errorf("%s in %s: %v: %s", script, base, err, out)
		}
	}
	// system.* other than ACLs: write permission.
	denied(tf.mnt, "setfattr -n system.gocryptfs_test -v x ro", "ermission denied")
	denied(tf.mnt, "setfattr -x system.gocryptfs_test ro", "ermission denied")
	allowed(tf.mnt, "setfattr -n system.gocryptfs_test -v x rw && setfattr -x system.gocryptfs_test rw")
	allowed(tf.mnt, "setfattr -n system.gocryptfs_test -v x mine")
	v := make([]byte, 16)
	if n, err := unix.Getxattr(tf.path("ro"), "system.gocryptfs_test", v); err != nil || string(v[:n]) != "root" {
		t.Errorf("system.gocryptfs_test of ro: %q, %v; want the value root set", v[:max(n, 0)], err)
	}
	if _, err := unix.Getxattr(tf.path("rw"), "system.gocryptfs_test", v); err != unix.ENODATA {
		t.Errorf("system.gocryptfs_test of rw after removal: %v", err)
	}
	// POSIX ACLs: only the owner, even with write permission.
	acl := fmt.Sprintf("setfacl -m u:%d:rw ", callerGid)
	for _, base := range []string{plain, tf.mnt} {
		denied(base, acl+"rw", "not permitted")
		denied(base, acl+"ro", "not permitted")
		allowed(base, acl+"mine")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDaemonCredSame: the identity switch is skipped only for a caller
// whose uid, gid and set of groups (in any order) are the daemon's.
func TestDaemonCredSame(t *testing.T) {
	d := daemonCred{ok: true, uid: 0, gid: 0, groups: []uint32{0, 10, 20}}
	cases := []struct {
		c    syscallcompat.Cred
		want bool
	}{
		{syscallcompat.Cred{Uid: 0, Gid: 0, Groups: []uint32{0, 10, 20}}, true},
		{syscallcompat.Cred{Uid: 0, Gid: 0, Groups: []uint32{20, 0, 10}}, true},
		{syscallcompat.Cred{Uid: 0, Gid: 0, Groups: []uint32{0, 10}}, false},
		{syscallcompat.Cred{Uid: 0, Gid: 0, Groups: []uint32{0, 10, 21}}, false},
		{syscallcompat.Cred{Uid: 0, Gid: 5, Groups: []uint32{0, 10, 20}}, false},
		{syscallcompat.Cred{Uid: 1000, Gid: 0, Groups: []uint32{0, 10, 20}}, false},
	}
	for _, c := range cases {
		if got := d.same(c.c); got != c.want {
			t.Errorf("%+v: %v, want %v", c.c, got, c.want)
		}
	}
	if (&daemonCred{}).same(syscallcompat.Cred{}) {
		t.Error("an unread daemon identity matched")
	}
	// The process's own identity, as procGroups reads it, matches.
	self := readDaemonCred()
	c := syscallcompat.Cred{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid()), Groups: procGroups(uint32(os.Getpid()), uint32(os.Getegid()))}
	if !self.same(c) {
		t.Errorf("own identity %+v does not match %+v", c, self)
	}
}

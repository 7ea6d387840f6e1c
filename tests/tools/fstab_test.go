package tools_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// requireMount skips unless mount(8)-style helpers can be used: FUSE,
// root, and the mount and mount.fuse3 programs.
func requireMount(t *testing.T) {
	t.Helper()
	testutil.RequireFuse(t)
	if os.Geteuid() != 0 {
		t.Skip("mount(8) needs root")
	}
	for _, p := range []string{"mount", "umount", "mount.fuse3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skip(p, " not found: ", err)
		}
	}
}

// runCmd runs a system command and returns its combined output and error.
func runCmd(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// fstabCase mounts in one of the ways an fstab entry is mounted and checks
// that the filesystem works, then unmounts with umount(8).
func checkFstabMount(t *testing.T, dir, mnt string, mountCmd []string, sock string) {
	t.Helper()
	out, err := runCmd(mountCmd[0], mountCmd[1:]...)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	if err != nil {
		t.Fatalf("%q failed: %v\n%s", mountCmd, err, out)
	}
	line := testutil.MountLine(mnt)
	if !strings.Contains(line, " fuse.gocryptfs ") {
		t.Fatalf("not mounted as fuse.gocryptfs: %q", line)
	}
	if err := os.WriteFile(filepath.Join(mnt, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if sock != "" {
		r := xray(t, "hello.txt\n", "-encrypt-paths", sock)
		testutil.Expect(t, r, 0)
		if _, err := os.Stat(filepath.Join(dir, strings.TrimSpace(r.Stdout))); err != nil {
			t.Errorf("ctlsock answer %q is not on disk: %v", r.Stdout, err)
		}
	}
	if out, err := runCmd("umount", mnt); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	waitFor(t, "the unmount", func() bool { return !testutil.IsMounted(mnt) })
}

// TestFstab mounts the way /etc/fstab and systemd do (docs/cli.md 5.4): through
// mount(8) with the type fuse./path/to/gocryptfs, with an alternative fstab
// file, and through the mount.fuse3 helper called directly, with the
// options users put there (nofail, _netdev, defaults, x-systemd.*, dev,
// suid, rw, exec).
func TestFstab(t *testing.T) {
	requireMount(t)
	dir := initFS(t)
	pf := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pf, []byte(testutil.Password+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	fsType := "fuse." + gocryptfsBin

	t.Run("mount -t", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		sock := filepath.Join(t.TempDir(), "ctl.sock")
		checkFstabMount(t, dir, mnt, []string{"mount", "-t", fsType, dir, mnt, "-o",
			"passfile=" + pf + ",allow_other,nofail,_netdev,defaults,x-systemd.automount,x-systemd.requires=foo.service,rw,exec,ctlsock=" + sock}, sock)
		// The daemon removes it when it sees the unmount, which is a
		// moment after the mount is gone from the mount table.
		waitFor(t, "the control socket to be removed after umount", func() bool {
			_, err := os.Lstat(sock)
			return os.IsNotExist(err)
		})
	})
	t.Run("fstab file", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		tab := filepath.Join(t.TempDir(), "fstab")
		line := dir + " " + mnt + " " + fsType + " nofail,allow_other,passfile=" + pf + ",x-systemd.automount 0 0\n"
		if err := os.WriteFile(tab, []byte("# test fstab\n"+line), 0o644); err != nil {
			t.Fatal(err)
		}
		checkFstabMount(t, dir, mnt, []string{"mount", "-T", tab, mnt}, "")
	})
	t.Run("mount.fuse3", func(t *testing.T) {
		// Called directly, the helper passes defaults and x-* options on.
		mnt := testutil.NewDir(t, "mnt")
		checkFstabMount(t, dir, mnt, []string{"mount.fuse3", dir, mnt, "-t", gocryptfsBin, "-o",
			"defaults,nofail,_netdev,x-systemd.automount,x-systemd.device-timeout=10,passfile=" + pf + ",ko=noatime"}, "")
	})
	t.Run("unknown option fails", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		out, err := runCmd("mount", "-t", fsType, dir, mnt, "-o", "passfile="+pf+",noatime")
		t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
		if err == nil || testutil.IsMounted(mnt) {
			t.Errorf("mount with an unknown option succeeded: %s", out)
		}
		if !strings.Contains(out, "unknown flag: --noatime") {
			t.Errorf("output %q", out)
		}
	})
	t.Run("wrong password fails", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		bad := filepath.Join(t.TempDir(), "bad")
		os.WriteFile(bad, []byte("wrong\n"), 0o400)
		out, err := runCmd("mount", "-t", fsType, dir, mnt, "-o", "nofail,passfile="+bad)
		t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
		if err == nil || testutil.IsMounted(mnt) || !strings.Contains(out, "Password incorrect.") {
			t.Errorf("mount with a wrong password: %v %s", err, out)
		}
	})
}

// TestFstabOptionsParsing: the fstab-only options are accepted and
// ignored by the command line itself (no mount needed).
func TestFstabOptionsParsing(t *testing.T) {
	dir := initFS(t)
	for _, o := range []string{"nofail", "_netdev", "defaults", "x-systemd.automount", "x-systemd.requires=a.service", "x-gvfs-show", "dev", "suid", "rw", "exec"} {
		r := gocryptfs(t, "-info", dir, "-o", o)
		testutil.Expect(t, r, 0, "FeatureFlags:")
	}
	testutil.Expect(t, gocryptfs(t, "-info", dir, "-o", "noatime"), 1, "unknown flag: --noatime")
	testutil.Expect(t, gocryptfs(t, "-info", dir, "-o", "xsystemd"), 1, "unknown flag: --xsystemd")
}

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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

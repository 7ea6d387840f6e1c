package tools_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestRepairRefusesMountedOtherPath: the mount check goes by device and
// inode, not by the path string: a CIPHERDIR mounted under one path
// (through a symlink, a bind mount, a relative path, or with -fsname
// hiding the source) is refused under any other path, and nothing
// changes. Both implementations' mounts are recognized; -fsname only for
// ours (its daemon holds CIPHERDIR open; the reference's leaves no trace
// the kernel would show, see repair.CheckNotMounted).
func TestRepairRefusesMountedOtherPath(t *testing.T) {
	type way struct {
		name string
		// paths returns the path to mount and the path to repair (and
		// the directory to run the repair in).
		paths func(t *testing.T, dir string) (mount, repair, cwd string)
		args  []string
		ours  bool
	}
	link := func(t *testing.T, dir string) string {
		l := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	bind := func(t *testing.T, dir string) string {
		b := filepath.Join(t.TempDir(), "bind")
		if err := os.Mkdir(b, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount(dir, b, "", syscall.MS_BIND, ""); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("bind mount needs root: %v", err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Unmount(b, syscall.MNT_DETACH) })
		return b
	}
	ways := []way{
		{name: "mounted-through-symlink", paths: func(t *testing.T, dir string) (string, string, string) { return link(t, dir), dir, "" }},
		{name: "repaired-through-symlink", paths: func(t *testing.T, dir string) (string, string, string) { return dir, link(t, dir), "" }},
		{name: "repaired-through-bind-mount", paths: func(t *testing.T, dir string) (string, string, string) { return dir, bind(t, dir), "" }},
		{name: "mounted-through-bind-mount", paths: func(t *testing.T, dir string) (string, string, string) { return bind(t, dir), dir, "" }},
		{name: "repaired-by-relative-path", paths: func(t *testing.T, dir string) (string, string, string) {
			return dir, filepath.Base(dir), filepath.Dir(dir)
		}},
		{name: "fsname", args: []string{"-fsname", "not-a-path"}, ours: true,
			paths: func(t *testing.T, dir string) (string, string, string) { return dir, dir, "" }},
	}
	for name, bin := range map[string]string{"ours": gocryptfsBin, "reference": testutil.ReferenceBin} {
		for _, w := range ways {
			if w.ours && name != "ours" {
				continue
			}
			t.Run(name+"/"+w.name, func(t *testing.T) {
				if _, err := os.Stat(bin); err != nil {
					t.Skipf("reference binary: %v", err)
				}
				dir, _ := faultyTree(t)
				mnt, rep, cwd := w.paths(t, dir)
				testutil.MountFS(t, bin, mnt, append([]string{"-q", "-extpass", "echo " + testutil.Password}, w.args...)...)
				sum := testutil.TreeSum(t, dir)
				args := append(append([]string{"-fsck", "-repair", "-q"}, masterkeyArgs(t)...), rep)
				r := testutil.Run(t, testutil.RunOptions{Dir: cwd}, gocryptfsBin, args...)
				testutil.Expect(t, r, 11, "is mounted")
				if testutil.TreeSum(t, dir) != sum {
					t.Error("refused repair changed the tree")
				}
			})
		}
	}
}

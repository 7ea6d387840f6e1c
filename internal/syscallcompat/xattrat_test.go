//go:build linux

package syscallcompat

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestXattrAt: attributes of an entry named in a directory fd are read,
// with the size query and ERANGE as with lgetxattr; a symlink is not
// followed; a missing attribute is ENODATA, a missing name ENOENT. The same
// holds on the /proc fallback that kernels before 6.13 take.
func TestXattrAt(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(f, "user.a", []byte("value"), 0); err != nil {
		t.Skipf("no user xattrs in %s: %v", dir, err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	dfd := openDir(t, dir)
	for _, via := range []string{"syscall", "fallback"} {
		t.Run(via, func(t *testing.T) {
			var x XattrAt
			if via == "fallback" {
				x.noSyscall.Store(true)
			}
			buf := make([]byte, 64)
			n, err := x.Lgetxattr(dfd, "f", "user.a", buf)
			if err != nil || string(buf[:n]) != "value" {
				t.Errorf("f: %q %v", buf[:n], err)
			}
			if n, err := x.Lgetxattr(dfd, "f", "user.a", nil); err != nil || n != 5 {
				t.Errorf("size query: %d %v", n, err)
			}
			if _, err := x.Lgetxattr(dfd, "f", "user.a", make([]byte, 2)); err != syscall.ERANGE {
				t.Errorf("small buffer: %v, want ERANGE", err)
			}
			if _, err := x.Lgetxattr(dfd, "f", "user.none", buf); err != syscall.ENODATA {
				t.Errorf("missing attribute: %v, want ENODATA", err)
			}
			if _, err := x.Lgetxattr(dfd, "link", "user.a", buf); err != syscall.ENODATA {
				t.Errorf("symlink followed: %v, want ENODATA", err)
			}
			if _, err := x.Lgetxattr(dfd, "missing", "user.a", buf); err != syscall.ENOENT {
				t.Errorf("missing name: %v, want ENOENT", err)
			}
		})
	}
}

//go:build testhooks

package fusefrontend_reverse

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPanicEveryOp injects a panic into each kind of request that runs
// code of this package, on a fresh mount each (so that nothing is cached
// in the kernel). The request must fail with EIO where the kernel reports
// it, the panic must be logged, and the mount must keep working.
func TestPanicEveryOp(t *testing.T) {
	plain := makeTV14(t)
	// statxSync forces a GETATTR even with cached attributes.
	statxSync := func(p string) error {
		var stx unix.Statx_t
		return unix.Statx(unix.AT_FDCWD, p, unix.AT_STATX_FORCE_SYNC|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &stx)
	}
	// readDirect reads without the page cache, whose readahead would
	// retry a failed read.
	readDirect := func(p string) error {
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_DIRECT, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Read(make([]byte, 4096))
		return err
	}
	cases := []struct {
		op    string
		fn    func(m *mounted, enc func(string) string) error
		noErr bool // the kernel does not report the error (Release)
	}{
		{"Lookup", func(m *mounted, enc func(string) string) error {
			return unix.Lstat(m.path(enc("hello.txt")), new(unix.Stat_t))
		}, false},
		{"Getattr", func(m *mounted, enc func(string) string) error { return statxSync(m.path(enc("dir1"))) }, false},
		{"Getattr", func(m *mounted, enc func(string) string) error {
			return statxSync(m.path(enc("dir1") + "/gocryptfs.diriv"))
		}, false},
		{"Readdir", func(m *mounted, enc func(string) string) error { _, err := os.ReadDir(m.mnt); return err }, false},
		{"Open", func(m *mounted, enc func(string) string) error {
			_, err := os.ReadFile(m.path(enc("hello.txt")))
			return err
		}, false},
		{"Open", func(m *mounted, enc func(string) string) error {
			_, err := os.ReadFile(m.path("gocryptfs.diriv"))
			return err
		}, false},
		{"Read", func(m *mounted, enc func(string) string) error { return readDirect(m.path(enc("hello.txt"))) }, false},
		{"Read", func(m *mounted, enc func(string) string) error { return readDirect(m.path("gocryptfs.conf")) }, false},
		{"Read", func(m *mounted, enc func(string) string) error { return readDirect(m.path("gocryptfs.diriv")) }, false},
		{"Readlink", func(m *mounted, enc func(string) string) error {
			_, err := os.Readlink(m.path(enc("link1")))
			return err
		}, false},
		{"Getxattr", func(m *mounted, enc func(string) string) error {
			names := make([]byte, 1024)
			n, err := unix.Listxattr(m.path(enc("hello.txt")), names)
			if err != nil || n == 0 {
				return errors.New("no attributes to read")
			}
			_, err = unix.Getxattr(m.path(enc("hello.txt")), strings.TrimRight(string(names[:n]), "\x00"), make([]byte, 256))
			return err
		}, false},
		{"Listxattr", func(m *mounted, enc func(string) string) error {
			_, err := unix.Listxattr(m.path(enc("hello.txt")), make([]byte, 1024))
			return err
		}, false},
		{"Statfs", func(m *mounted, enc func(string) string) error { return unix.Statfs(m.mnt, new(unix.Statfs_t)) }, false},
		{"Release", func(m *mounted, enc func(string) string) error {
			_, err := os.ReadFile(m.path(enc("hello.txt")))
			return err
		}, true},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			var armed, hit atomic.Bool
			m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain}, func(rn *RootNode) {
				rn.hooks.hook = func(op string) {
					if op == c.op && armed.Load() && hit.CompareAndSwap(false, true) {
						panic("injected panic in " + op)
					}
				}
			})
			enc := func(p string) string {
				e, err := rn.EncryptPath(p)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			if c.op != "Lookup" {
				// Look the paths up before arming.
				for _, p := range []string{"hello.txt", "dir1", "link1"} {
					os.Lstat(m.path(enc(p)))
				}
			}
			armed.Store(true)
			err := c.fn(m, enc)
			// RELEASE is sent asynchronously after the last close, and
			// the panic is logged only after the hook ran: wait for the
			// log line.
			logged := func() bool { return strings.Contains(m.logs.String(), "injected panic in "+c.op) }
			for i := 0; i < 100 && !logged(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			armed.Store(false)
			if !hit.Load() {
				t.Fatalf("no %s request was made", c.op)
			}
			if !c.noErr && !errors.Is(err, syscall.EIO) {
				t.Errorf("%s with a panic: %v, want EIO", c.op, err)
			}
			if !logged() {
				t.Errorf("panic in %s not logged", c.op)
			}
			if b, err := os.ReadFile(m.path(enc("dir1/file.txt"))); err != nil || len(b) == 0 {
				t.Fatalf("mount broken after a panic in %s: %v", c.op, err)
			}
		})
	}
}

//go:build testhooks

package fusefrontend

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPanicEveryOp injects a panic into each kind of request in turn. The
// request must fail (with EIO where the kernel passes the error on), the
// panic must be logged with the operation name, and the mount must keep
// working afterwards.
func TestPanicEveryOp(t *testing.T) {
	// keepFlush: the first FLUSH refused with ENOSYS would stop them all.
	tf := mountFS(t, testConfig{keepFlush: true})
	var target atomic.Pointer[string]
	var hit atomic.Bool
	hook := func(op string) {
		if p := target.Load(); p != nil && *p == op && hit.CompareAndSwap(false, true) {
			panic("injected panic in " + op)
		}
	}
	tf.rn.hooks.hook.Store(&hook)

	f := tf.path("f")
	mustWrite(t, f, []byte("data"))
	if err := unix.Setxattr(f, "user.a", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tf.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", tf.path("s")); err != nil {
		t.Fatal(err)
	}
	cFresh, err := tf.rn.EncryptPath("fresh")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(tf.cipher, cFresh), nil)
	fresh := tf.path("fresh")
	// withFile runs fn on an open handle of f.
	withFile := func(flag int, fn func(h *os.File) error) func() error {
		return func() error {
			h, err := os.OpenFile(f, flag, 0)
			if err != nil {
				return err
			}
			defer h.Close()
			return fn(h)
		}
	}
	flock := func(cmd int, typ int16) func(h *os.File) error {
		return func(h *os.File) error {
			lk := unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 1}
			return unix.FcntlFlock(h.Fd(), cmd, &lk)
		}
	}
	cases := []struct {
		op string
		fn func() error
		// noErr: the kernel does not report this request's error to the
		// caller (Release), or falls back to doing the work itself.
		noErr bool
	}{
		// A name the kernel has never seen: a failed revalidation of a
		// known one would just be retried as a fresh lookup.
		{"Lookup", func() error { return unix.Lstat(fresh, new(unix.Stat_t)) }, false},
		{"Getattr", func() error { return unix.Lstat(f, new(unix.Stat_t)) }, false},
		{"Statfs", func() error { return unix.Statfs(tf.mnt, new(unix.Statfs_t)) }, false},
		{"Readdir", func() error { _, err := os.ReadDir(tf.mnt); return err }, false},
		{"Mkdir", func() error { return os.Mkdir(tf.path("newdir"), 0o755) }, false},
		{"Rmdir", func() error { return unix.Rmdir(tf.path("d")) }, false},
		{"Unlink", func() error { return unix.Unlink(tf.path("s")) }, false},
		{"Rename", func() error { return os.Rename(tf.path("d"), tf.path("d2")) }, false},
		{"Symlink", func() error { return os.Symlink("t", tf.path("s2")) }, false},
		{"Readlink", func() error { _, err := os.Readlink(tf.path("s")); return err }, false},
		{"Link", func() error { return os.Link(f, tf.path("h")) }, false},
		{"Mknod", func() error { return unix.Mkfifo(tf.path("p"), 0o644) }, false},
		{"Open", func() error { _, err := os.ReadFile(f); return err }, false},
		{"Create", func() error { return os.WriteFile(tf.path("new"), nil, 0o644) }, false},
		// O_DIRECT: a failed readahead would be retried by a second read.
		{"Read", withFile(os.O_RDONLY|unix.O_DIRECT, func(h *os.File) error { _, err := h.ReadAt(make([]byte, 4096), 0); return err }), false},
		{"Write", withFile(os.O_RDWR, func(h *os.File) error { _, err := h.WriteAt([]byte("x"), 0); return err }), false},
		// A writable handle: read-only ones send no FLUSH (FOPEN_NOFLUSH).
		{"Flush", withFile(os.O_RDWR, func(h *os.File) error { return h.Close() }), false},
		{"Fsync", withFile(os.O_RDWR, func(h *os.File) error { return h.Sync() }), false},
		{"Release", withFile(os.O_RDONLY, func(h *os.File) error { return h.Close() }), true},
		{"Allocate", withFile(os.O_RDWR, func(h *os.File) error { return unix.Fallocate(int(h.Fd()), 0, 0, 10) }), false},
		{"Lseek", withFile(os.O_RDONLY, func(h *os.File) error { _, err := unix.Seek(int(h.Fd()), 0, unix.SEEK_DATA); return err }), false},
		{"Getlk", withFile(os.O_RDWR, flock(unix.F_GETLK, unix.F_WRLCK)), false},
		{"Setlk", withFile(os.O_RDWR, flock(unix.F_SETLK, unix.F_WRLCK)), false},
		{"Setlkw", withFile(os.O_RDWR, flock(unix.F_SETLKW, unix.F_WRLCK)), false},
		{"Setattr", func() error { return os.Chmod(f, 0o600) }, false},
		{"Getxattr", func() error { _, err := unix.Getxattr(f, "user.a", make([]byte, 64)); return err }, false},
		{"Setxattr", func() error { return unix.Setxattr(f, "user.b", []byte("v"), 0) }, false},
		{"Removexattr", func() error { return unix.Removexattr(f, "user.a") }, false},
		{"Listxattr", func() error { _, err := unix.Listxattr(f, make([]byte, 256)); return err }, false},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			op := c.op
			hit.Store(false)
			target.Store(&op)
			err := c.fn()
			// RELEASE is sent asynchronously after the last close, and
			// the panic is logged only after the hook ran: wait for the
			// log line.
			logged := func() bool { return strings.Contains(tf.logs.String(), "injected panic in "+c.op) }
			for i := 0; i < 100 && !logged(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			target.Store(nil)
			if !hit.Load() {
				t.Fatalf("no %s request was made", c.op)
			}
			if !c.noErr && !errors.Is(err, syscall.EIO) {
				t.Errorf("%s with a panic: %v, want EIO", c.op, err)
			}
			if !logged() {
				t.Errorf("panic in %s not logged", c.op)
			}
			if b, err := os.ReadFile(f); err != nil || !bytes.HasPrefix(b, []byte("d")) && !bytes.HasPrefix(b, []byte("x")) {
				t.Fatalf("mount broken after a panic in %s: %q, %v", c.op, b, err)
			}
			if _, err := os.ReadDir(filepath.Join(tf.mnt)); err != nil {
				t.Fatalf("mount broken after a panic in %s: %v", c.op, err)
			}
		})
	}
}

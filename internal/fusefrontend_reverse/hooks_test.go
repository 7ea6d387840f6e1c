//go:build testhooks

// The tests that need the test hook (hooks_testhooks.go); test.bash runs
// them with -tags testhooks.

package fusefrontend_reverse

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPanicGivesEIO: a panic inside a request fails that request with EIO
// and the mount survives.
func TestPanicGivesEIO(t *testing.T) {
	plain := makeTV14(t)
	var target atomic.Pointer[string]
	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain}, func(rn *RootNode) {
		rn.hooks.hook = func(op string) {
			if p := target.Load(); p != nil && *p == op {
				panic("injected panic in " + op)
			}
		}
	})
	cases := []struct {
		op string
		fn func() error
	}{
		{"Lookup", func() error { return unix.Lstat(m.path("F8rwmoCL-WWYHyKmxirgkg"), new(unix.Stat_t)) }},
		{"Read", func() error { _, err := os.ReadFile(m.path("iah1MkNOCMZe5AW-W605oQ")); return err }},
		{"Readdir", func() error { _, err := os.ReadDir(m.mnt); return err }},
		{"Readlink", func() error { _, err := os.Readlink(m.path("XQJH2Es0-94o4Jo8iSvfzQ")); return err }},
	}
	for _, c := range cases {
		op := c.op
		target.Store(&op)
		err := c.fn()
		target.Store(nil)
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s with panic: %v, want EIO", c.op, err)
		}
		b, err := os.ReadFile(m.path("F8rwmoCL-WWYHyKmxirgkg"))
		if err != nil || len(b) != 62 {
			t.Fatalf("mount did not survive a panic in %s: %d bytes, %v", c.op, len(b), err)
		}
	}
}

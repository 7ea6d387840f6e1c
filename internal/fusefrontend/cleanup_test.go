//go:build testhooks

package fusefrontend

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFailedOpsRestore makes the last step of multi-step operations fail
// (through the inject seam) and checks that CIPHERDIR is left exactly as
// before: no directory without its IV, no lost directory, no orphaned or
// missing long-name file, no moved IV file left behind.
func TestFailedOpsRestore(t *testing.T) {
	tf := mountFS(t, testConfig{})
	var failStep atomic.Pointer[string]
	var failAt, calls atomic.Int32
	fail := func(step string) error {
		if p := failStep.Load(); p != nil && *p == step && calls.Add(1) == failAt.Load() {
			return syscall.EIO
		}
		return nil
	}
	tf.rn.hooks.fail.Store(&fail)
	long := func(s string) string { return strings.Repeat(s, 200) }
	for _, p := range []string{"a", "b", "a/emptydir", "b/" + long("E"), "a/" + long("X")} {
		if err := os.Mkdir(tf.path(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(tf.path("a/locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("a/f"), []byte("file"))
	mustWrite(t, tf.path("a/"+long("X")+"/inner"), []byte("inner"))
	if err := os.Chmod(tf.path("a/locked"), 0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, step string
		nth        int32 // which call of the step fails
		fn         func() error
		check      string // a plaintext directory that must still be usable
	}{
		{"mkdir", "mkdir-chmod", 1, func() error { return os.Mkdir(tf.path("a/new"), 0o755) }, ""},
		{"mkdir-long", "mkdir-chmod", 1, func() error { return os.Mkdir(tf.path("a/"+long("n")), 0o755) }, ""},
		{"rmdir", "rmdir", 1, func() error { return unix.Rmdir(tf.path("a/emptydir")) }, "a/emptydir"},
		{"rmdir-long", "rmdir", 1, func() error { return unix.Rmdir(tf.path("b/" + long("E"))) }, "b/" + long("E")},
		{"rmdir-mode000", "rmdir", 1, func() error { return unix.Rmdir(tf.path("a/locked")) }, ""},
		{"rename-to-long", "rename", 1, func() error { return os.Rename(tf.path("a/f"), tf.path("b/"+long("F"))) }, ""},
		{"rename-long-dir", "rename", 1, func() error { return os.Rename(tf.path("a/"+long("X")), tf.path("b/"+long("Y"))) }, "a/" + long("X")},
		// The first rename fails with ENOTEMPTY (the target holds its
		// IV file); the second, with the IV moved out, is made to fail.
		{"rename-over-empty-dir", "rename", 2, func() error {
			return unix.Rename(tf.path("a/"+long("X")), tf.path("a/emptydir"))
		}, "a/emptydir"},
		{"rename-over-empty-long-dir", "rename", 2, func() error {
			return unix.Rename(tf.path("a/"+long("X")), tf.path("b/"+long("E")))
		}, "b/" + long("E")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := cipherSnapshot(t, tf.cipher)
			step := c.step
			calls.Store(0)
			failAt.Store(c.nth)
			failStep.Store(&step)
			err := c.fn()
			failStep.Store(nil)
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("got %v, want the injected EIO", err)
			}
			if after := cipherSnapshot(t, tf.cipher); !slices.Equal(before, after) {
				t.Errorf("CIPHERDIR changed:\nbefore %q\nafter  %q", before, after)
			}
			if c.check != "" {
				p := tf.path(c.check + "/probe")
				mustWrite(t, p, []byte("x"))
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(tf.path("a/" + long("X") + "/inner")); err != nil || string(b) != "inner" {
				t.Errorf("source directory: %q, %v", b, err)
			}
		})
	}
}

//go:build linux

package fusefrontend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// TestLongNameExistingEntry: operations that fail because a long-named
// entry already exists (O_EXCL create, mkdir, mknod, symlink, link, rename
// with RENAME_NOREPLACE) must not remove the entry's long-name file, which
// would make the existing entry unreachable.
func TestLongNameExistingEntry(t *testing.T) {
	tf := mountFS(t, testConfig{})
	name := strings.Repeat("e", 200)
	p := tf.path(name)
	mustWrite(t, p, []byte("keep"))
	mustWrite(t, tf.path("other"), []byte("other"))
	before := cipherSnapshot(t, tf.cipher)
	// The kernel answers EEXIST itself when it knows the entry, so the
	// operations are called directly, as in a race with another client.
	root := &tf.rn.Node
	ctx := context.Background()
	var out fuse.EntryOut
	if _, err := os.Stat(tf.path("other")); err != nil {
		t.Fatal(err)
	}
	other := tf.rn.EmbeddedInode().GetChild("other")
	if other == nil {
		t.Fatal("no inode for other")
	}
	ops := []struct {
		name string
		fn   func() error
	}{
		{"create-excl", func() error {
			_, f, err := root.create(ctx, name, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR, 0o644, &out)
			if f != nil {
				tf.rn.releaseFile(f)
			}
			return err
		}},
		{"mkdir", func() error { _, err := root.mkdir(ctx, name, 0o755, &out); return err }},
		{"mknod", func() error { _, err := root.mknod(ctx, name, unix.S_IFIFO|0o644, 0, &out); return err }},
		{"symlink", func() error { _, err := root.symlink(ctx, "t", name, &out); return err }},
		{"link", func() error { _, err := root.link(ctx, other.Operations(), name, &out); return err }},
		{"rename-noreplace", func() error { return root.rename("other", tf.rn, name, unix.RENAME_NOREPLACE) }},
	}
	for _, op := range ops {
		if err := op.fn(); !errors.Is(err, syscall.EEXIST) {
			t.Errorf("%s: %v, want EEXIST", op.name, err)
		}
		if after := cipherSnapshot(t, tf.cipher); !slices.Equal(before, after) {
			t.Fatalf("%s changed CIPHERDIR:\nbefore %q\nafter  %q", op.name, before, after)
		}
		if b, err := os.ReadFile(filepath.Join(tf.mnt, name)); err != nil || string(b) != "keep" {
			t.Fatalf("after %s: %q, %v", op.name, b, err)
		}
	}
}

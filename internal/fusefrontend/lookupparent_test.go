package fusefrontend

import (
	"context"
	"os"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// TestLookupParentDetached: the kernel's reconnection of a directory file
// handle asks for the parent of a node (LOOKUP of ".."). A node that has
// lost its place in go-fuse's tree while its entry exists (go-fuse drops
// a directory nobody looked up when the kernel forgets its last child,
// concurrently with the LOOKUP of "." that registers the directory for a
// handle: TestPosixTable/file-handles got ESTALE for the directory handle
// after the remount under load) is found again by inode number, and its
// path is linked back into the tree.
func TestLookupParentDetached(t *testing.T) {
	tf := mountFS(t, testConfig{})
	must(t, os.MkdirAll(tf.path("a/b"), 0o755))
	var st unix.Stat_t
	must(t, unix.Stat(tf.path("a/b"), &st))
	root := tf.rn.EmbeddedInode()
	a := root.GetChild("a")
	if a == nil || a.GetChild("b") == nil {
		t.Fatal("a/b not in the tree after a lookup")
	}
	b := a.GetChild("b")
	// Detach b and its parent, as go-fuse's forgetting does.
	a.RmChild("b")
	root.RmChild("a")
	if _, p := b.Parent(); p != nil {
		t.Fatal("b still has a parent")
	}
	var out fuse.EntryOut
	p, name, errno := nodeOf(b.Operations()).LookupParent(context.Background(), &out)
	if errno != 0 {
		t.Fatalf("LookupParent of a detached node: %v", errno)
	}
	if name != "b" || p.StableAttr().Ino != a.StableAttr().Ino {
		t.Errorf("parent %q (ino %d), want b in a (ino %d)", name, p.StableAttr().Ino, a.StableAttr().Ino)
	}
	if got := nodeOf(p.Operations()).relPath(); got != "a" {
		t.Errorf("parent's path %q, want a", got)
	}
	if out.Attr.Ino != a.StableAttr().Ino {
		t.Errorf("parent's attributes: ino %d, want %d", out.Attr.Ino, a.StableAttr().Ino)
	}
}

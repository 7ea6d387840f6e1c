package fusefrontend

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
)

// TestDirCacheAfterRenameAndRmdir: the directory fd/IV cache is keyed by
// plaintext path, so after "rename A B" or "rmdir A" a new A must get its
// own backing directory and IV, never the cached one of the old A (names
// created in the new A would otherwise be encrypted with the wrong IV or
// land in B). A fresh mount must agree with everything.
func TestDirCacheAfterRenameAndRmdir(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true})
	dirIV := func(p string) []byte {
		t.Helper()
		c, err := tf.rn.EncryptPath(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tf.cipher, c, nametransform.DirIVFilename))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := os.MkdirAll(tf.path("A/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("A/sub/old"), []byte("old")) // caches A and A/sub
	oldIV, oldSubIV := dirIV("A"), dirIV("A/sub")
	if err := os.Rename(tf.path("A"), tf.path("B")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tf.path("A/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("A/sub/new"), []byte("new"))
	if bytes.Equal(dirIV("A"), oldIV) || bytes.Equal(dirIV("A/sub"), oldSubIV) {
		t.Fatal("the new A reuses the IV of the renamed one")
	}
	if !bytes.Equal(dirIV("B"), oldIV) || !bytes.Equal(dirIV("B/sub"), oldSubIV) {
		t.Fatal("the renamed directory lost its IV")
	}
	// rmdir and recreate
	if err := os.Mkdir(tf.path("R"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("R/f"), nil)
	rIV := dirIV("R")
	os.Remove(tf.path("R/f"))
	if err := os.Remove(tf.path("R")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tf.path("R"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("R/g"), []byte("g"))
	if bytes.Equal(dirIV("R"), rIV) {
		t.Fatal("the recreated R has the removed R's IV")
	}
	fresh := mountExisting(t, testConfig{}, tf.cipher, false)
	for _, m := range []*testFS{tf, fresh} {
		for p, want := range map[string]string{"A/sub/new": "new", "B/sub/old": "old", "R/g": "g"} {
			if b, err := os.ReadFile(m.path(p)); err != nil || string(b) != want {
				t.Errorf("%s: %q, %v", p, b, err)
			}
		}
		if _, err := os.Stat(m.path("A/sub/old")); !os.IsNotExist(err) {
			t.Errorf("A/sub/old: %v", err)
		}
	}
}

// TestDirCacheInvalidate: invalidating a path drops it and everything
// below it, nothing else (a sibling with the same prefix stays); a
// reference handed out before stays usable after eviction and the fd is
// closed with the last reference.
func TestDirCacheInvalidate(t *testing.T) {
	c := newDirCache(false)
	refs := map[string]*dirRef{}
	for _, p := range []string{"a", "a/b", "a/b/c", "ab", "x"} {
		fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		refs[p] = newDirRef(fd)
		c.put(p, refs[p], nil, c.generation())
	}
	held, _, ok := c.get("a/b")
	if !ok {
		t.Fatal("a/b not cached")
	}
	gen := c.generation()
	c.invalidate("a", "x/y")
	if c.generation() == gen {
		t.Error("invalidate did not advance the generation")
	}
	for p, want := range map[string]bool{"a": false, "a/b": false, "a/b/c": false, "ab": true, "x": true} {
		r, _, ok := c.get(p)
		if ok != want {
			t.Errorf("%s cached: %v, want %v", p, ok, want)
		}
		if ok {
			r.release()
		}
	}
	// Our own references of the put calls.
	for _, r := range refs {
		r.release()
	}
	var st unix.Stat_t
	if err := unix.Fstat(held.fd, &st); err != nil {
		t.Fatalf("borrowed fd closed while still referenced: %v", err)
	}
	held.release()
	if err := unix.Fstat(held.fd, &st); err != unix.EBADF {
		t.Errorf("fd still open after the last release: %v", err)
	}
	c.clear()
	if err := unix.Fstat(refs["ab"].fd, &st); err != unix.EBADF {
		t.Errorf("cached fd still open after clear: %v", err)
	}
}

// TestDirCacheRenameOverCachedDir: a directory renamed over another,
// cached, empty one (rename(2): os.Rename refuses an existing directory):
// the destination path must now lead to the moved
// directory (its IV and content), in this mount and in a fresh one.
func TestDirCacheRenameOverCachedDir(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true})
	if err := os.Mkdir(tf.path("D"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tf.path("S/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("S/sub/g"), []byte("g"))
	mustWrite(t, tf.path("D/keep"), nil) // caches D again
	if err := os.Remove(tf.path("D/keep")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Rename(tf.path("S"), tf.path("D")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("D/h"), []byte("h"))
	mustWrite(t, tf.path("D/sub/i"), []byte("i"))
	fresh := mountExisting(t, testConfig{}, tf.cipher, false)
	for _, m := range []*testFS{tf, fresh} {
		for p, want := range map[string]string{"D/h": "h", "D/sub/g": "g", "D/sub/i": "i"} {
			if b, err := os.ReadFile(m.path(p)); err != nil || string(b) != want {
				t.Errorf("%s: %q, %v", p, b, err)
			}
		}
	}
}

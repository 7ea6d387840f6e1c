package fusefrontend

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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

//go:build linux

package fusefrontend

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"gocryptfs/internal/nametransform"
)

// TestCorruption damages ciphertext behind the mount's back: only the
// damaged file (or directory) fails, with EIO and one log line, and
// everything else keeps working (docs/format.md 4.8, TV-15).
func TestCorruption(t *testing.T) {
	tf := mountFS(t, testConfig{})
	mustWrite(t, tf.path("flip"), pattern(5000, 1))
	mustWrite(t, tf.path("good"), pattern(5000, 2))
	mustWrite(t, tf.path("short"), pattern(4097, 3))
	mustWrite(t, tf.path("tiny"), pattern(4095, 4))
	mustWrite(t, tf.path("hdr"), []byte("hello world!"))
	os.Mkdir(tf.path("nodiriv"), 0o755)
	mustWrite(t, tf.path("nodiriv/x"), nil)
	os.Mkdir(tf.path("okdir"), 0o755)
	mustWrite(t, tf.path("okdir/y"), nil)

	cpath := func(p string) string {
		c, err := tf.rn.EncryptPath(p)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(tf.cipher, c)
	}
	// flip one byte in block 0's ciphertext
	cf := cpath("flip")
	b, _ := os.ReadFile(cf)
	b[18+16+5] ^= 0x01
	os.WriteFile(cf, b, 0o644)
	// header version 3
	hb, _ := os.ReadFile(cpath("hdr"))
	hb[0], hb[1] = 0, 3
	os.WriteFile(cpath("hdr"), hb, 0o644)
	// cut "short" to 18+4128+20: incomplete last block
	os.Truncate(cpath("short"), 18+4128+20)
	// cut "tiny" to 10 bytes: less than a header
	os.Truncate(cpath("tiny"), 10)
	// remove a directory's IV
	os.Remove(filepath.Join(cpath("nodiriv"), nametransform.DirIVFilename))
	tf.rn.dirCache.clear() // as if the cached IV had expired

	// contentio remembers logged corruption per open inode: repeated
	// reads through open handles log once.
	fh, err := os.Open(tf.path("flip"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := fh.ReadAt(make([]byte, 10), 0)
		errIs(t, err, syscall.EIO, "read flipped file")
	}
	fh.Close()
	if n := tf.logs.CountLines("corrupt block #0"); n != 1 {
		t.Fatalf("%d log lines for the corrupt block, want 1:\n%s", n, tf.logs)
	}
	if st := statOf(t, tf.path("flip")); st.Size != 5000 {
		t.Fatalf("flip size %d", st.Size)
	}
	if got := mustRead(t, tf.path("good")); !slices.Equal(got, pattern(5000, 2)) {
		t.Fatal("good file damaged")
	}
	// block 1 of "flip" is intact and still readable on its own
	f, err := os.Open(tf.path("flip"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.ReadFile(tf.path("flip"))
	errIs(t, err, syscall.EIO, "read flipped file again")
	buf := make([]byte, 100)
	if _, err := f.ReadAt(buf, 4096); err != nil || !slices.Equal(buf, pattern(5000, 1)[4096:4196]) {
		t.Fatalf("intact block: %v", err)
	}
	f.Close()

	if st := statOf(t, tf.path("short")); st.Size != 4097 {
		t.Fatalf("short size %d, want 4097", st.Size)
	}
	_, err = os.ReadFile(tf.path("short"))
	errIs(t, err, syscall.EIO, "read incomplete last block")
	f, _ = os.Open(tf.path("short"))
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatalf("block 0 of short: %v", err)
	}
	f.Close()

	if st := statOf(t, tf.path("hdr")); st.Size != 12 {
		t.Fatalf("hdr size %d", st.Size)
	}
	_, err = os.ReadFile(tf.path("hdr"))
	errIs(t, err, syscall.EIO, "read bad header")
	if tf.logs.CountLines("invalid version, want=2 have=3") == 0 {
		t.Fatalf("bad header not logged:\n%s", tf.logs)
	}

	if st := statOf(t, tf.path("tiny")); st.Size != 0 {
		t.Fatalf("tiny size %d", st.Size)
	}
	if got := mustRead(t, tf.path("tiny")); len(got) != 0 {
		t.Fatalf("tiny read %d bytes", len(got))
	}

	_, err = os.ReadDir(tf.path("nodiriv"))
	errIs(t, err, syscall.EIO, "list dir without diriv")
	if got := listNames(t, tf.path("okdir")); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("okdir %v", got)
	}
	if got := listNames(t, tf.mnt); len(got) != 7 {
		t.Fatalf("root listing %v", got)
	}
}

// TestDirIVSymlinkEIO replaces a directory's gocryptfs.diriv with a symlink
// to a valid IV file: like every other unreadable IV it is damage (EIO),
// not ELOOP, and the symlink is never followed.
func TestDirIVSymlinkEIO(t *testing.T) {
	tf := mountFS(t, testConfig{})
	os.Mkdir(tf.path("d"), 0o755)
	mustWrite(t, tf.path("d/x"), nil)
	c, err := tf.rn.EncryptPath("d")
	if err != nil {
		t.Fatal(err)
	}
	cd := filepath.Join(tf.cipher, c)
	iv := filepath.Join(cd, nametransform.DirIVFilename)
	if err := os.Rename(iv, filepath.Join(cd, "real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", iv); err != nil {
		t.Fatal(err)
	}
	tf.rn.dirCache.clear()
	_, err = os.ReadDir(tf.path("d"))
	errIs(t, err, syscall.EIO, "list dir with a symlinked diriv")
	_, err = os.Stat(tf.path("d/x"))
	errIs(t, err, syscall.EIO, "stat in dir with a symlinked diriv")
}

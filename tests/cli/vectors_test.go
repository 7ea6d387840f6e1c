package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gocryptfs/internal/testutil"
)

// checkVectorContent verifies the plaintext of a mounted vector.
func checkVectorContent(t *testing.T, mnt string, hasLongName bool) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(mnt, "status.txt")); err != nil || string(b) != testutil.VectorContent {
		t.Errorf("status.txt: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(mnt, "rel")); err != nil || l != testutil.VectorRelTarget {
		t.Errorf("rel: %q %v", l, err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "rel")); err != nil || string(b) != testutil.VectorContent {
		t.Errorf("reading through rel: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(mnt, "abs")); err != nil || l != testutil.VectorAbsTarget {
		t.Errorf("abs: %q %v", l, err)
	}
	if hasLongName {
		if b, err := os.ReadFile(filepath.Join(mnt, testutil.VectorLongName)); err != nil || string(b) != testutil.VectorContent {
			t.Errorf("long name file: %q %v", b, err)
		}
	}
}

func TestForwardVectors(t *testing.T) {
	for _, c := range testutil.ForwardVectors() {
		t.Run(c.Name, func(t *testing.T) {
			testutil.RequireFuse(t)
			dir := testutil.CopyCipherVector(t, c.Name)

			// Password mount (extpass), read-write.
			mnt := mountFS(t, dir, "-extpass", "echo test")
			checkVectorContent(t, mnt, c.HasLongName)
			newData := []byte("written by the reimplementation\n")
			if err := os.WriteFile(filepath.Join(mnt, "new.txt"), newData, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "new.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("read back: %q %v", b, err)
			}
			testutil.UnmountDir(t, mnt)

			// Password mount (passfile): the new file persisted.
			mnt = mountFS(t, dir, "-passfile", passfile(t, "test"))
			if b, err := os.ReadFile(filepath.Join(mnt, "new.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("new.txt after remount: %q %v", b, err)
			}
			testutil.UnmountDir(t, mnt)

			// Master key mount with the feature flags on the command line.
			mnt = mountFS(t, dir, append([]string{"-masterkey", c.MasterKey}, c.Flags()...)...)
			checkVectorContent(t, mnt, c.HasLongName)
			if b, err := os.ReadFile(filepath.Join(mnt, "new.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("new.txt via -masterkey: %q %v", b, err)
			}
			if err := os.WriteFile(filepath.Join(mnt, "new2.txt"), newData, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "new2.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("new2.txt: %q %v", b, err)
			}
		})
	}
}

func TestTooOldVectors(t *testing.T) {
	for _, name := range testutil.TooOldVectors() {
		t.Run(name, func(t *testing.T) {
			testutil.RequireFuse(t)
			dir := testutil.CopyCipherVector(t, name)
			mnt := newDir(t)
			r := run(t, "-extpass", "echo test", dir, mnt)
			if testutil.IsMounted(mnt) {
				testutil.UnmountDir(t, mnt)
			}
			testutil.Expect(t, r, 27, "too old")
			testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\nnew\n"}, "-passwd", dir), 27, "too old")
			testutil.Expect(t, run(t, "-info", dir), 8, "Loading config file failed:")
		})
	}
}

func TestVectorInfo(t *testing.T) {
	r := run(t, "-info", testutil.VectorDir(t, "v1.3"))
	testutil.Expect(t, r, 0,
		"FeatureFlags:      GCMIV128 DirIV EMENames LongNames Raw64 HKDF\n",
		"EncryptedKey:      64B\n",
		"contentEncryption: AES-GCM-256\n")
	r = run(t, "-info", testutil.VectorDir(t, "v0.7"))
	testutil.Expect(t, r, 0, "EncryptedKey:      60B\n")
}

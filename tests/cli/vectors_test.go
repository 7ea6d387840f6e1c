package cli_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vectorsDir locates ../shared/vectors/reference-examples next to the
// project root, or skips the test.
func vectorsDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(projectRoot, "..", "shared", "vectors", "reference-examples")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("test vectors not found: %v", err)
	}
	return d
}

// copyVector copies a vector into a temp dir with writable modes and turns
// the flattened symlinks back into symlinks: in the vectors, a symlink was
// stored as a regular file holding its (encrypted) target. Such files are
// recognized because real content files start with the file header
// version 0x0002 (or are empty), and the config, diriv and .name files are
// known by name.
func copyVector(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := d.Name()
		special := name == "gocryptfs.conf" || name == "gocryptfs.diriv" ||
			name == ".gocryptfs.reverse.conf" || strings.HasSuffix(name, ".name")
		if !special && len(data) > 0 && !bytes.HasPrefix(data, []byte{0, 2}) {
			return os.Symlink(string(data), target)
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

const (
	vectorContent = "It works!\n"
	longName      = "longname_255_"
)

func longNameFile() string { return longName + strings.Repeat("x", 242) }

// checkVectorContent verifies the plaintext of a mounted vector.
func checkVectorContent(t *testing.T, mnt string, hasLongName bool) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(mnt, "status.txt")); err != nil || string(b) != vectorContent {
		t.Errorf("status.txt: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(mnt, "rel")); err != nil || l != "status.txt" {
		t.Errorf("rel: %q %v", l, err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "rel")); err != nil || string(b) != vectorContent {
		t.Errorf("reading through rel: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(mnt, "abs")); err != nil || l != "/a/b/c/d" {
		t.Errorf("abs: %q %v", l, err)
	}
	if hasLongName {
		if b, err := os.ReadFile(filepath.Join(mnt, longNameFile())); err != nil || string(b) != vectorContent {
			t.Errorf("long name file: %q %v", b, err)
		}
	}
}

func TestForwardVectors(t *testing.T) {
	vd := vectorsDir(t)
	cases := []struct {
		name     string
		key      string
		extra    []string
		longName bool
	}{
		{"v0.7", "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf", []string{"-raw64=false", "-hkdf=false"}, false},
		{"v0.7-plaintextnames", "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7", []string{"-plaintextnames", "-raw64=false", "-hkdf=false"}, false},
		{"v0.9", "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c", []string{"-raw64=false", "-hkdf=false"}, true},
		{"v1.1-aessiv", "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b", []string{"-aessiv", "-raw64=false", "-hkdf=false"}, true},
		{"v1.3", "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e", nil, true},
		{"v2.2-deterministic-names", "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e", []string{"-deterministic-names"}, true},
		{"v2.2-xchacha", "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26", []string{"-xchacha"}, true},
		{"v2.2-xchacha-deterministic-names", "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39", []string{"-xchacha", "-deterministic-names"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireFuse(t)
			dir := copyVector(t, filepath.Join(vd, c.name))

			// Password mount (extpass), read-write.
			mnt := mountFS(t, dir, "-extpass", "echo test")
			checkVectorContent(t, mnt, c.longName)
			newData := []byte("written by the reimplementation\n")
			if err := os.WriteFile(filepath.Join(mnt, "new.txt"), newData, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "new.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("read back: %q %v", b, err)
			}
			unmount(t, mnt)

			// Password mount (passfile): the new file persisted.
			mnt = mountFS(t, dir, "-passfile", passfile(t, "test"))
			if b, err := os.ReadFile(filepath.Join(mnt, "new.txt")); err != nil || !bytes.Equal(b, newData) {
				t.Fatalf("new.txt after remount: %q %v", b, err)
			}
			unmount(t, mnt)

			// Master key mount with the feature flags on the command line.
			mnt = mountFS(t, dir, append([]string{"-masterkey", c.key}, c.extra...)...)
			checkVectorContent(t, mnt, c.longName)
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
	vd := vectorsDir(t)
	for _, name := range []string{"v0.4", "v0.5", "v0.6", "v0.6-plaintextnames"} {
		t.Run(name, func(t *testing.T) {
			requireFuse(t)
			dir := copyVector(t, filepath.Join(vd, name))
			mnt := newDir(t)
			r := run(t, "-extpass", "echo test", dir, mnt)
			if isMounted(t, mnt) {
				unmount(t, mnt)
			}
			expect(t, r, 27, "too old")
			expect(t, runWith(t, runOpts{stdin: "test\nnew\n"}, "-passwd", dir), 27, "too old")
			expect(t, run(t, "-info", dir), 8, "Loading config file failed:")
		})
	}
}

func TestVectorInfo(t *testing.T) {
	vd := vectorsDir(t)
	r := run(t, "-info", filepath.Join(vd, "v1.3"))
	expect(t, r, 0,
		"FeatureFlags:      GCMIV128 DirIV EMENames LongNames Raw64 HKDF\n",
		"EncryptedKey:      64B\n",
		"contentEncryption: AES-GCM-256\n")
	r = run(t, "-info", filepath.Join(vd, "v0.7"))
	expect(t, r, 0, "EncryptedKey:      60B\n")
}

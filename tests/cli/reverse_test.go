package cli_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// reverseVectors are the reverse-mode rows of the vectors README.
var reverseVectors = []struct {
	name  string
	key   string
	extra []string // for a -masterkey mount, forward and reverse
	plain bool
}{
	{"v1.1-reverse", "68b51855-042abd80-635ae1ba-90152a78-2ec2d243-832ac72a-eab0561a-f2d37913", []string{"-raw64=false", "-hkdf=false"}, false},
	{"v1.1-reverse-plaintextnames", "e7fb8f0d-2a81df9e-26611e4b-5540b218-e48aa458-c2a623af-d0c82637-1466b5f2", []string{"-plaintextnames", "-raw64=false", "-hkdf=false"}, true},
	{"v1.3-reverse", "2290a7f4-3e1908fb-b006f7d9-261bdaf1-4b72bc38-3b24956c-db7d8a8d-d996076a", nil, false},
}

// copyPlainVector copies a reverse (plaintext) vector to a temp dir. The
// vector copies store the symlinks rel and abs flattened into regular files
// holding their target; they become symlinks again.
func copyPlainVector(t *testing.T, src string) string {
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
		if rel == "rel" || rel == "abs" {
			return os.Symlink(string(data), target)
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReverseVectors mounts each reverse vector through the command line,
// mounts its encrypted view again in forward mode (with the password, then
// with the master key and -aessiv) and checks that the plaintext is back.
func TestReverseVectors(t *testing.T) {
	vd := vectorsDir(t)
	for _, v := range reverseVectors {
		t.Run(v.name, func(t *testing.T) {
			plain := copyPlainVector(t, filepath.Join(vd, v.name))
			view := mountFS(t, plain, "-reverse", "-extpass", "echo test")
			if err := os.WriteFile(filepath.Join(view, "x"), nil, 0o644); err == nil {
				t.Error("the reverse view accepted a write")
			}
			fwd := mountFS(t, view, "-extpass", "echo test")
			checkVectorContent(t, fwd, true)
			unmount(t, fwd)

			fwd = mountFS(t, view, append([]string{"-masterkey", v.key, "-aessiv"}, v.extra...)...)
			checkVectorContent(t, fwd, true)
			unmount(t, fwd)
			unmount(t, view)

			// A -masterkey reverse mount (config not read) shows the same view.
			view2 := mountFS(t, plain, append([]string{"-reverse", "-masterkey", v.key}, v.extra...)...)
			fwd = mountFS(t, view2, append([]string{"-masterkey", v.key, "-aessiv"}, v.extra...)...)
			checkVectorContent(t, fwd, true)
		})
	}
}

// TestReverseV13Facts checks the exact facts the vectors README gives for
// v1.3-reverse's encrypted view.
func TestReverseV13Facts(t *testing.T) {
	plain := copyPlainVector(t, filepath.Join(vectorsDir(t), "v1.3-reverse"))
	view := mountFS(t, plain, "-reverse", "-extpass", "echo test")
	data, err := os.ReadFile(filepath.Join(view, "zOsW1-BUX54hC2hmhu2EOw/4ZqrpGQdw5r07KR1qw2ZeQ/tfCm9Sp9J_Dvc-jD7J6p8g"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := md5.Sum(data); hex.EncodeToString(sum[:]) != "9818501d214c5eb42ca2472caf6c82a1" {
		t.Errorf("MD5 of dir1/dir2/file's ciphertext: %x", sum)
	}
	for _, name := range []string{"D8VwRPqWW8x7M5OEoMs0Eg", "kkmARPseVj4XQFW-EL42-w"} {
		if _, err := os.Lstat(filepath.Join(view, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s (encrypted . or ..): want ENOENT, got %v", name, err)
		}
	}
}

// TestReverseInitMountErrors covers -init -reverse followed by a reverse
// mount and its error exits.
func TestReverseInitMountErrors(t *testing.T) {
	plain := newDir(t)
	content := bytes.Repeat([]byte("reverse "), 1000)
	if err := os.WriteFile(filepath.Join(plain, "f"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)
	// The config must not exist yet.
	expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 7)

	// An unreadable -exclude-from file: exit 29.
	expect(t, run(t, "-reverse", "-extpass", "echo test", "-exclude-from", filepath.Join(plain, "missing"), plain, newDir(t)), 29)
	// -exclude in forward mode: exit 29.
	expect(t, run(t, "-extpass", "echo test", "-exclude", "f", initFS(t), newDir(t)), 29)
	// A forward config used for a reverse mount lacks AES-SIV: exit 1.
	fwd := initFS(t)
	expect(t, run(t, "-reverse", "-extpass", "echo test", "-config", filepath.Join(fwd, "gocryptfs.conf"), plain, newDir(t)), 1)
	// Wrong password: exit 12.
	expect(t, run(t, "-reverse", "-extpass", "echo wrong", plain, newDir(t)), 12)

	view := mountFS(t, plain, "-reverse", "-extpass", "echo test", "-exclude", "excluded")
	if line := mountInfoLine(t, view); !bytes.Contains([]byte(line), []byte("fuse.gocryptfs-reverse")) {
		t.Errorf("mount type: %s", line)
	}
	back := mountFS(t, view, "-extpass", "echo test")
	if b, err := os.ReadFile(filepath.Join(back, "f")); err != nil || !bytes.Equal(b, content) {
		t.Errorf("round trip through reverse and forward: %d bytes, %v", len(b), err)
	}
}

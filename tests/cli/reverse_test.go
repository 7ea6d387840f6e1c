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

	"gocryptfs/internal/testutil"
)

// TestReverseVectors mounts each reverse vector through the command line,
// mounts its encrypted view again in forward mode (with the password, then
// with the master key and -aessiv) and checks that the plaintext is back.
func TestReverseVectors(t *testing.T) {
	for _, v := range testutil.ReverseVectors() {
		t.Run(v.Name, func(t *testing.T) {
			plain := testutil.CopyPlainVector(t, v.Name)
			view := mountFS(t, plain, "-reverse", "-extpass", "echo test")
			if err := os.WriteFile(filepath.Join(view, "x"), nil, 0o644); err == nil {
				t.Error("the reverse view accepted a write")
			}
			fwd := mountFS(t, view, "-extpass", "echo test")
			checkVectorContent(t, fwd, true)
			testutil.UnmountDir(t, fwd)

			fwd = mountFS(t, view, append([]string{"-masterkey", v.MasterKey, "-aessiv"}, v.Flags()...)...)
			checkVectorContent(t, fwd, true)
			testutil.UnmountDir(t, fwd)
			testutil.UnmountDir(t, view)

			// A -masterkey reverse mount (config not read) shows the same view.
			view2 := mountFS(t, plain, append([]string{"-reverse", "-masterkey", v.MasterKey}, v.Flags()...)...)
			fwd = mountFS(t, view2, append([]string{"-masterkey", v.MasterKey, "-aessiv"}, v.Flags()...)...)
			checkVectorContent(t, fwd, true)
		})
	}
}

// TestReverseV13Facts checks the exact facts the vectors README gives for
// v1.3-reverse's encrypted view.
func TestReverseV13Facts(t *testing.T) {
	plain := testutil.CopyPlainVector(t, "v1.3-reverse")
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
	testutil.Expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)
	// The config must not exist yet.
	testutil.Expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 7)

	// An unreadable -exclude-from file: exit 29.
	testutil.Expect(t, run(t, "-reverse", "-extpass", "echo test", "-exclude-from", filepath.Join(plain, "missing"), plain, newDir(t)), 29)
	// -exclude in forward mode: exit 29.
	testutil.Expect(t, run(t, "-extpass", "echo test", "-exclude", "f", initFS(t), newDir(t)), 29)
	// A forward config used for a reverse mount lacks AES-SIV: exit 1.
	fwd := initFS(t)
	testutil.Expect(t, run(t, "-reverse", "-extpass", "echo test", "-config", filepath.Join(fwd, "gocryptfs.conf"), plain, newDir(t)), 1)
	// Wrong password: exit 12.
	testutil.Expect(t, run(t, "-reverse", "-extpass", "echo wrong", plain, newDir(t)), 12)

	view := mountFS(t, plain, "-reverse", "-extpass", "echo test", "-exclude", "excluded")
	if line := testutil.MountLine(view); !bytes.Contains([]byte(line), []byte("fuse.gocryptfs-reverse")) {
		t.Errorf("mount type: %s", line)
	}
	back := mountFS(t, view, "-extpass", "echo test")
	if b, err := os.ReadFile(filepath.Join(back, "f")); err != nil || !bytes.Equal(b, content) {
		t.Errorf("round trip through reverse and forward: %d bytes, %v", len(b), err)
	}
}

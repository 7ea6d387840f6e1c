package cli_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// TestReverseMountInside: a reverse view may be mounted inside the
// directory it shows (the reference allows it for "/" only, we refused it
// with "is contained in cipherdir"). The view leaves its own mount point
// out, so that it never contains itself; everything else decrypts back
// (forward mount of the view) to the plaintext, also with -one-file-system
// and -force_owner. Forward mode keeps refusing.
func TestReverseMountInside(t *testing.T) {
	testutil.RequireFuse(t)
	plain := newDir(t)
	for p, content := range map[string]string{"top": "top file", "a/f": "in a", "sub/keep": "next to the mount point"} {
		if err := os.MkdirAll(filepath.Join(plain, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plain, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mnt := filepath.Join(plain, "sub", "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)

	// The mount point's encrypted name, from a view mounted elsewhere
	// (names are deterministic): sub's only directory.
	outside := mountFS(t, plain, "-reverse", "-extpass", "echo test")
	var encSub, encMnt string
	for _, e := range readDir(t, outside) {
		if e.IsDir() && len(readDir(t, filepath.Join(outside, e.Name()))) == 3 {
			encSub = e.Name() // keep, mnt, gocryptfs.diriv
		}
	}
	for _, e := range readDir(t, filepath.Join(outside, encSub)) {
		if e.IsDir() {
			encMnt = e.Name()
		}
	}
	testutil.UnmountDir(t, outside)
	if encSub == "" || encMnt == "" {
		t.Fatalf("encrypted names of sub (%q) and sub/mnt (%q) not found", encSub, encMnt)
	}

	for _, extra := range [][]string{nil, {"-one-file-system"}, {"-force_owner", "1234:1234"}} {
		t.Run(strings.Join(append([]string{"flags"}, extra...), " "), func(t *testing.T) {
			r := run(t, append(append([]string{"-reverse", "-extpass", "echo test"}, extra...), plain, mnt)...)
			t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
			testutil.Expect(t, r, 0)
			if !testutil.IsMounted(mnt) {
				t.Fatalf("not mounted: %v", r)
			}
			names := []string{}
			for _, e := range readDir(t, filepath.Join(mnt, encSub)) {
				names = append(names, e.Name())
			}
			if len(names) != 2 || slices.Contains(names, encMnt) {
				t.Errorf("view of sub lists %q: want the file and gocryptfs.diriv, not the mount point %s", names, encMnt)
			}
			if _, err := os.Lstat(filepath.Join(mnt, encSub, encMnt)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("lookup of the mount point in the view: %v, want ENOENT", err)
			}
			if len(extra) == 2 {
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(mnt, encSub), &st); err != nil || st.Uid != 1234 || st.Gid != 1234 {
					t.Errorf("-force_owner: %d:%d %v", st.Uid, st.Gid, err)
				}
			}
			// Decrypted again, the view is the plaintext without the
			// mount point (and the reverse config, shown as gocryptfs.conf).
			back := mountFS(t, mnt, "-extpass", "echo test")
			if got, want := treeOf(t, back), treeOf(t, plain); !maps.Equal(got, want) {
				t.Errorf("decrypted view:\n%v\nwant:\n%v", got, want)
			}
		})
	}

	// Forward mode: still refused.
	fwd := initFS(t)
	inside := filepath.Join(fwd, "sub")
	if err := os.Mkdir(inside, 0o700); err != nil {
		t.Fatal(err)
	}
	testutil.Expect(t, run(t, "-extpass", "echo test", fwd, inside), 10, "contained in cipherdir")
}

// readDir lists dir.
func readDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// treeOf maps every path below root to its content ("dir" for
// directories), leaving out .gocryptfs.reverse.conf and sub/mnt (while
// the view is mounted on it, it shows the view).
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == "sub/mnt":
			return filepath.SkipDir
		case rel == "." || rel == ".gocryptfs.reverse.conf":
			return nil
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

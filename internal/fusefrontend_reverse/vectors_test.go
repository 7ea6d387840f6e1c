package fusefrontend_reverse

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// TestReverseVectors mounts the reverse-mode reference vectors, mounts each
// view in forward mode on top and compares the result with the plaintext.
func TestReverseVectors(t *testing.T) {
	for _, v := range testutil.ReverseVectors() {
		t.Run(v.Name, func(t *testing.T) {
			cfg := fsConfig{masterKey: v.Key(t), hkdf: v.HKDF, padded64: !v.Raw64, plaintextNames: v.PlaintextNames}
			plain := testutil.CopyPlainVector(t, v.Name)
			for p, want := range testutil.VectorSymlinks() {
				if got, err := os.Readlink(filepath.Join(plain, p)); err != nil || got != want {
					t.Fatalf("recreated symlink %s -> %q, %v", p, got, err)
				}
			}
			rev, _ := mountReverse(t, cfg, Args{PlainDir: plain})
			fwd := mountForward(t, cfg, rev.mnt)
			n := compareTrees(t, plain, fwd.mnt, func(rel string) bool { return rel == ReverseConfName })
			if want := map[bool]int{true: 8, false: 5}[v.Name == "v1.3-reverse"]; n != want {
				t.Errorf("compared %d entries, want %d", n, want)
			}
			conf, err := os.ReadFile(rev.path("gocryptfs.conf"))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(filepath.Join(plain, ReverseConfName))
			if !bytes.Equal(conf, want) {
				t.Error("gocryptfs.conf differs from .gocryptfs.reverse.conf")
			}
			if v.Name != "v1.3-reverse" {
				return
			}
			// Exact facts of the vectors README.
			data, err := os.ReadFile(rev.path("zOsW1-BUX54hC2hmhu2EOw/4ZqrpGQdw5r07KR1qw2ZeQ/tfCm9Sp9J_Dvc-jD7J6p8g"))
			if err != nil {
				t.Fatal(err)
			}
			if sum := md5.Sum(data); hex.EncodeToString(sum[:]) != "9818501d214c5eb42ca2472caf6c82a1" {
				t.Errorf("dir1/dir2/file MD5 %x", sum)
			}
			for _, n := range []string{"D8VwRPqWW8x7M5OEoMs0Eg", "kkmARPseVj4XQFW-EL42-w"} {
				if err := unix.Lstat(rev.path(n), new(unix.Stat_t)); err != syscall.ENOENT {
					t.Errorf("%s: %v, want ENOENT", n, err)
				}
			}
		})
	}
}

// compareTrees checks that the tree at got has exactly the entries of want
// (minus those skip selects), with identical types, permission bits,
// contents, symlink targets and user xattrs. It returns the number of
// entries compared (the root included).
func compareTrees(t *testing.T, want, got string, skip func(rel string) bool) int {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		if rel == "." {
			rel = ""
		}
		if rel != "" && skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		seen[rel] = true
		compareEntry(t, rel, p, filepath.Join(got, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(got, p)
		if rel == "." {
			rel = ""
		}
		if !seen[rel] {
			t.Errorf("unexpected entry %q", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(seen)
}

func compareEntry(t *testing.T, rel, want, got string) {
	t.Helper()
	var ws, gs unix.Stat_t
	if err := unix.Lstat(want, &ws); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(got, &gs); err != nil {
		t.Errorf("%q: %v", rel, err)
		return
	}
	if rel != "" && ws.Mode != gs.Mode {
		t.Errorf("%q: mode %o, want %o", rel, gs.Mode, ws.Mode)
		return
	}
	switch ws.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		wd, err1 := os.ReadFile(want)
		gd, err2 := os.ReadFile(got)
		if err1 != nil || err2 != nil || !bytes.Equal(wd, gd) {
			t.Errorf("%q: content differs (%d vs %d bytes; %v %v)", rel, len(gd), len(wd), err1, err2)
		}
		if ws.Size != gs.Size {
			t.Errorf("%q: size %d, want %d", rel, gs.Size, ws.Size)
		}
	case syscall.S_IFLNK:
		wt, _ := os.Readlink(want)
		gt, err := os.Readlink(got)
		if err != nil || wt != gt {
			t.Errorf("%q: target %q (%v), want %q", rel, gt, err, wt)
		}
	}
	if ws.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		wx := userXattrs(t, want)
		gx := userXattrs(t, got)
		if !maps.Equal(wx, gx) {
			t.Errorf("%q: xattrs %q, want %q", rel, gx, wx)
		}
	}
}

// userXattrs returns the user.* attributes of p.
func userXattrs(t testing.TB, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range listXattr(t, p) {
		if strings.HasPrefix(n, "user.") {
			out[n] = string(getXattr(t, p, n))
		}
	}
	return out
}

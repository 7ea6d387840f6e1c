package nametransform

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// Every forward-mode reference example: list the ciphertext directory the
// way a frontend would (Classify, ReadDirIVAt, DecryptNameAt), check the
// names, re-encrypt them, and decrypt the two symlinks (stored as real
// symlinks or flattened into files holding the target).
func TestReferenceExamples(t *testing.T) {
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			opts := Options{PlaintextNames: v.PlaintextNames, DeterministicNames: v.DeterministicNames, Raw64: v.Raw64}
			n, err := New(newCCKey(t, v.Key(t), cryptocore.ContentCipher(v.Cipher), v.HKDF), opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := testutil.VectorDir(t, v.Name)
			dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(dirfd)
			var iv []byte
			if n.UsesDirIV() {
				if iv, err = ReadDirIVAt(dirfd); err != nil {
					t.Fatal(err)
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			backing := map[string]string{}
			for _, e := range ents {
				k := n.Classify(e.Name(), true)
				if k.Hidden() {
					continue
				}
				plain, err := n.DecryptNameAt(dirfd, e.Name(), iv)
				if err != nil {
					t.Errorf("%s (%v): %v", e.Name(), k, err)
					continue
				}
				got = append(got, plain)
				backing[plain] = e.Name()
				// Re-encryption must give the backing name again.
				if again, err := n.EncryptAndHashName(plain, iv); err != nil || again != e.Name() {
					t.Errorf("%.20s re-encrypts to %s, %v; want %s", plain, again, err, e.Name())
				}
				if k == KindLongName {
					enc, _ := ReadLongNameAt(dirfd, e.Name())
					if n.HashLongName(enc) != e.Name() {
						t.Errorf("hash of .name content does not match %s", e.Name())
					}
				}
			}
			want := []string{"abs", "rel", "status.txt"}
			if v.HasLongName {
				want = append(want, testutil.VectorLongName)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("names %q, want %q", got, want)
			}
			for link, target := range testutil.VectorSymlinks() {
				stored, _, err := testutil.ReadStored(filepath.Join(dir, backing[link]))
				if err != nil {
					t.Fatal(err)
				}
				if dec, err := n.DecryptSymlinkTarget(string(stored)); err != nil || dec != target {
					t.Errorf("symlink %s → %q, %v; want %q", link, dec, err, target)
				}
			}
		})
	}
}

// v1.3-reverse: the encrypted view path of dir1/dir2/file, built from
// PathIV directory IVs, and the encrypted "." and ".." that must not be
// accepted as names.
func TestReferenceReversePath(t *testing.T) {
	v := testutil.VectorNamed(t, "v1.3-reverse")
	n, err := New(newCCKey(t, v.Key(t), cryptocore.ContentCipher(v.Cipher), v.HKDF), Options{Raw64: v.Raw64})
	if err != nil {
		t.Fatal(err)
	}
	cipherPath := ""
	for _, comp := range []string{"dir1", "dir2", "file"} {
		enc, err := n.EncryptAndHashName(comp, PathIV(cipherPath, PurposeDirIV))
		if err != nil {
			t.Fatal(err)
		}
		if cipherPath != "" {
			cipherPath += "/"
		}
		cipherPath += enc
	}
	if want := "zOsW1-BUX54hC2hmhu2EOw/4ZqrpGQdw5r07KR1qw2ZeQ/tfCm9Sp9J_Dvc-jD7J6p8g"; cipherPath != want {
		t.Errorf("dir1/dir2/file → %s, want %s", cipherPath, want)
	}
	rootIV := PathIV("", PurposeDirIV)
	for _, dots := range []string{"D8VwRPqWW8x7M5OEoMs0Eg", "kkmARPseVj4XQFW-EL42-w"} {
		if name, err := n.DecryptName(dots, rootIV); !errors.Is(err, ErrBadName) {
			t.Errorf("DecryptName(%s) = %q, %v; want ErrBadName", dots, name, err)
		}
		// They really are "." and "..": the EME layer decrypts them fine.
		raw, _ := n.B64().DecodeString(dots)
		p, ok := unpad16(n.cc.EME.Decrypt(rootIV, raw))
		if !ok || (string(p) != "." && string(p) != "..") {
			t.Errorf("%s is %q, not a dot name", dots, p)
		}
	}
}

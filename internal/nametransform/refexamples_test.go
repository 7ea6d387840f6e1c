package nametransform

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
)

const refExamples = "../../../shared/vectors/reference-examples"

// Every forward-mode reference example: list the ciphertext directory the
// way a frontend would (Classify, ReadDirIVAt, DecryptNameAt), check the
// names, re-encrypt them, and decrypt the two flattened symlinks.
func TestReferenceExamples(t *testing.T) {
	if _, err := os.Stat(refExamples); err != nil {
		t.Skipf("vectors not available: %v", err)
	}
	longName := "longname_255_" + rep("x", 242)
	cases := []struct {
		dir    string
		key    string
		cipher cryptocore.ContentCipher
		hkdf   bool
		opts   Options
		long   bool
	}{
		{"v0.7", "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf", cryptocore.AESGCM, false, Options{}, false},
		{"v0.7-plaintextnames", "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7", cryptocore.AESGCM, false, Options{PlaintextNames: true}, false},
		{"v0.9", "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c", cryptocore.AESGCM, false, Options{}, true},
		{"v1.1-aessiv", "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b", cryptocore.AESSIV, false, Options{}, true},
		{"v1.3", "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e", cryptocore.AESGCM, true, Options{Raw64: true}, true},
		{"v2.2-deterministic-names", "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e", cryptocore.AESGCM, true, Options{Raw64: true, DeterministicNames: true}, true},
		{"v2.2-xchacha", "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26", cryptocore.XChaCha20Poly1305, true, Options{Raw64: true}, true},
		{"v2.2-xchacha-deterministic-names", "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39", cryptocore.XChaCha20Poly1305, true, Options{Raw64: true, DeterministicNames: true}, true},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			mk, err := hex.DecodeString(strings.ReplaceAll(c.key, "-", ""))
			if err != nil {
				t.Fatal(err)
			}
			n, err := New(newCCKey(t, mk, c.cipher, c.hkdf), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(refExamples, c.dir)
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
			if c.long {
				want = append(want, longName)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("names %q, want %q", got, want)
			}
			for link, target := range map[string]string{"rel": "status.txt", "abs": "/a/b/c/d"} {
				stored, err := os.ReadFile(filepath.Join(dir, backing[link]))
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
	mk, _ := hex.DecodeString(strings.ReplaceAll("2290a7f4-3e1908fb-b006f7d9-261bdaf1-4b72bc38-3b24956c-db7d8a8d-d996076a", "-", ""))
	n, err := New(newCCKey(t, mk, cryptocore.AESSIV, true), Options{Raw64: true})
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

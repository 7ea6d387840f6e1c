package fusefrontend

import (
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

const vectorsDir = "../../../shared/vectors/reference-examples"

// copyVector copies a reference vector into a writable temp dir. In the
// vectors, symlinks were flattened into regular files holding the stored
// target; isLink tells which backing files to turn back into symlinks.
func copyVector(t *testing.T, src string, isLink func(name string, content []byte) bool) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if isLink(d.Name(), b) {
			return os.Symlink(string(b), target)
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func parseMasterKey(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 32 {
		t.Fatalf("bad master key %q", s)
	}
	return b
}

// TestReferenceVectors mounts copies of the reference-written forward
// filesystems and reads their known contents.
func TestReferenceVectors(t *testing.T) {
	if _, err := os.Stat(vectorsDir); err != nil {
		t.Skip("reference vectors not available:", err)
	}
	requireFuse(t)
	longFile := "longname_255_" + strings.Repeat("x", 242)
	cases := []struct {
		name string
		key  string
		cfg  testConfig
		long bool
	}{
		{"v0.7", "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf", testConfig{padded64: true, noHKDF: true}, false},
		{"v0.7-plaintextnames", "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7", testConfig{plaintextNames: true, padded64: true, noHKDF: true}, false},
		{"v0.9", "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c", testConfig{padded64: true, noHKDF: true}, true},
		{"v1.1-aessiv", "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b", testConfig{cipher: cryptocore.AESSIV, padded64: true, noHKDF: true}, true},
		{"v1.3", "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e", testConfig{}, true},
		{"v2.2-deterministic-names", "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e", testConfig{deterministic: true}, true},
		{"v2.2-xchacha", "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26", testConfig{cipher: cryptocore.XChaCha20Poly1305}, true},
		{"v2.2-xchacha-deterministic-names", "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39", testConfig{cipher: cryptocore.XChaCha20Poly1305, deterministic: true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.masterKey = parseMasterKey(t, tc.key)
			// A name transform of the same filesystem tells flattened
			// symlinks (their content decrypts as a target) from files.
			cc, err := cryptocore.New(cfg.masterKey, cryptocore.Options{Cipher: cfg.cipher, HKDF: !cfg.noHKDF})
			if err != nil {
				t.Fatal(err)
			}
			nt, err := nametransform.New(cc, nametransform.Options{PlaintextNames: cfg.plaintextNames, DeterministicNames: cfg.deterministic, Raw64: !cfg.padded64})
			if err != nil {
				t.Fatal(err)
			}
			isLink := func(name string, content []byte) bool {
				if cfg.plaintextNames {
					return name == "rel" || name == "abs"
				}
				if strings.HasPrefix(name, "gocryptfs.") {
					return false
				}
				_, err := nt.DecryptSymlinkTarget(string(content))
				return err == nil
			}
			cipher := copyVector(t, filepath.Join(vectorsDir, tc.name), isLink)
			tf := mountExisting(t, cfg, cipher, false)
			want := []string{"abs", "rel", "status.txt"}
			if tc.long {
				want = append(want, longFile)
			}
			slices.Sort(want)
			if got := listNames(t, tf.mnt); !slices.Equal(got, want) {
				t.Fatalf("listing %q", got)
			}
			if got := mustRead(t, tf.path("status.txt")); string(got) != "It works!\n" {
				t.Fatalf("status.txt: %q", got)
			}
			for link, target := range map[string]string{"rel": "status.txt", "abs": "/a/b/c/d"} {
				if got, err := os.Readlink(tf.path(link)); err != nil || got != target {
					t.Fatalf("readlink %s: %q %v", link, got, err)
				}
				if st := statOf(t, tf.path(link)); st.Size != int64(len(target)) {
					t.Fatalf("lstat %s size %d", link, st.Size)
				}
			}
			if got := mustRead(t, tf.path("rel")); string(got) != "It works!\n" {
				t.Fatalf("through rel: %q", got)
			}
			if tc.long {
				if got := mustRead(t, tf.path(longFile)); string(got) != "It works!\n" {
					t.Fatalf("long name file: %q", got)
				}
			}
			// Writing into the old filesystem keeps it readable.
			mustWrite(t, tf.path("new "+tc.name), []byte("new data"))
			if got := mustRead(t, tf.path("new "+tc.name)); string(got) != "new data" {
				t.Fatalf("new file: %q", got)
			}
		})
	}
}

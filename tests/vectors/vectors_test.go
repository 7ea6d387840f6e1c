// Package vectors checks the format core against the ciphertext directories
// written by the reference implementation (../shared/vectors), offline: no
// FUSE, only the config, name and content packages.
package vectors

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

// vectorsDir is where the shared reference vectors live, relative to this
// package directory.
const vectorsDir = "../../../shared/vectors/reference-examples"

const password = "test"

var longName = "longname_255_" + strings.Repeat("x", 242)

// forwardVector is one row of the table in ../shared/vectors/README.md.
type forwardVector struct {
	dir       string
	masterKey string // as printed in the README, with dashes
	// settings for a -masterkey mount (the config is not read then)
	cipher         cryptocore.ContentCipher
	hkdf, raw64    bool
	plaintextNames bool
	deterministic  bool
	hasLongName    bool
}

var forwardVectors = []forwardVector{
	{dir: "v0.7", masterKey: "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf"},
	{dir: "v0.7-plaintextnames", masterKey: "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7", plaintextNames: true},
	{dir: "v0.9", masterKey: "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c", hasLongName: true},
	{dir: "v1.1-aessiv", masterKey: "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b", cipher: cryptocore.AESSIV, hasLongName: true},
	{dir: "v1.3", masterKey: "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e", hkdf: true, raw64: true, hasLongName: true},
	{dir: "v2.2-deterministic-names", masterKey: "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e", hkdf: true, raw64: true, deterministic: true, hasLongName: true},
	{dir: "v2.2-xchacha", masterKey: "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26", cipher: cryptocore.XChaCha20Poly1305, hkdf: true, raw64: true, hasLongName: true},
	{dir: "v2.2-xchacha-deterministic-names", masterKey: "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39", cipher: cryptocore.XChaCha20Poly1305, hkdf: true, raw64: true, deterministic: true, hasLongName: true},
}

// plaintext is what the "content" directory of the vectors holds: regular
// files with their content, and symlinks with their target.
type plaintext struct {
	files    map[string]string
	symlinks map[string]string
}

func wantPlaintext(withLongName bool) plaintext {
	p := plaintext{
		files:    map[string]string{"status.txt": "It works!\n"},
		symlinks: map[string]string{"rel": "status.txt", "abs": "/a/b/c/d"},
	}
	if withLongName {
		p.files[longName] = "It works!\n"
	}
	return p
}

func parseMasterKey(t *testing.T, s string) []byte {
	t.Helper()
	mk, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(mk) != cryptocore.KeyLen {
		t.Fatalf("bad master key %q in table", s)
	}
	return mk
}

// decryptTree decrypts the root directory of a ciphertext vector. The vector
// copies store symlinks flattened into regular files holding the encrypted
// target, so the caller's knowledge of which names are symlinks decides how
// an entry's content is interpreted.
func decryptTree(t *testing.T, dir string, nt *nametransform.NameTransform, ce *contentenc.ContentEnc, symlinkNames map[string]string) plaintext {
	t.Helper()
	got := plaintext{files: map[string]string{}, symlinks: map[string]string{}}
	var iv []byte
	if nt.UsesDirIV() {
		var err error
		iv, err = os.ReadFile(filepath.Join(dir, nametransform.DirIVFilename))
		if err != nil {
			t.Fatalf("reading root diriv: %v", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		cname := e.Name()
		if nt.IsHiddenInListing(cname, true) {
			continue
		}
		encName := cname
		if !nt.PlaintextNames() && nametransform.IsLongContent(cname) {
			b, err := os.ReadFile(filepath.Join(dir, nametransform.LongNameFilename(cname)))
			if err != nil {
				t.Fatalf("%s: reading long name file: %v", cname, err)
			}
			encName = string(b)
		}
		name := cname
		if !nt.PlaintextNames() {
			name, err = nt.DecryptName(encName, iv)
			if err != nil {
				t.Errorf("%s: name does not decrypt: %v", cname, err)
				continue
			}
			// The name must encrypt back to exactly what is on disk.
			if again, err := nt.EncryptAndHashName(name, iv); err != nil || again != cname {
				t.Errorf("%q re-encrypts to %q (%v), on disk %q", name, again, err, cname)
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, cname))
		if err != nil {
			t.Fatal(err)
		}
		if _, isLink := symlinkNames[name]; isLink {
			target, err := nt.DecryptSymlinkTarget(string(raw))
			if err != nil {
				t.Errorf("symlink %s: target does not decrypt: %v", name, err)
				continue
			}
			got.symlinks[name] = target
			continue
		}
		got.files[name] = decryptFile(t, name, raw, ce)
	}
	return got
}

func decryptFile(t *testing.T, name string, raw []byte, ce *contentenc.ContentEnc) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	h, err := contentenc.ParseHeader(raw[:min(len(raw), contentenc.HeaderLen)])
	if err != nil {
		t.Errorf("%s: header: %v", name, err)
		return ""
	}
	pt, err := ce.DecryptBlocks(nil, raw[contentenc.HeaderLen:], 0, h.ID[:])
	if err != nil {
		t.Errorf("%s: content: %v", name, err)
		return ""
	}
	if uint64(len(pt)) != ce.CipherSizeToPlainSize(uint64(len(raw))) {
		t.Errorf("%s: decrypted %d bytes, size mapping says %d", name, len(pt), ce.CipherSizeToPlainSize(uint64(len(raw))))
	}
	return string(pt)
}

func build(t *testing.T, mk []byte, c cryptocore.ContentCipher, hkdf bool, nopts nametransform.Options) (*nametransform.NameTransform, *contentenc.ContentEnc) {
	t.Helper()
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: c, Backend: cryptocore.BackendGo, HKDF: hkdf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Wipe)
	nt, err := nametransform.New(cc, nopts)
	if err != nil {
		t.Fatal(err)
	}
	ce, err := contentenc.New(cc, contentenc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return nt, ce
}

func comparePlaintext(t *testing.T, got, want plaintext) {
	t.Helper()
	if !mapsEqual(got.files, want.files) {
		t.Errorf("files:\n got  %v\n want %v", keys(got.files), keys(want.files))
		for k, v := range want.files {
			if got.files[k] != v {
				t.Errorf("file %.40q: got %q, want %q", k, got.files[k], v)
			}
		}
	}
	if !mapsEqual(got.symlinks, want.symlinks) {
		t.Errorf("symlinks: got %v, want %v", got.symlinks, want.symlinks)
	}
}

// TestForwardVectorsWithPassword unlocks each vector's config with the
// password and decrypts everything with the settings the config dictates.
func TestForwardVectorsWithPassword(t *testing.T) {
	for _, v := range forwardVectors {
		t.Run(v.dir, func(t *testing.T) {
			dir := filepath.Join(vectorsDir, v.dir)
			cf, err := configfile.Load(filepath.Join(dir, configfile.ConfDefaultName))
			if err != nil {
				t.Fatal(err)
			}
			mk, err := cf.DecryptMasterKey([]byte(password))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mk, parseMasterKey(t, v.masterKey)) {
				t.Fatalf("master key %x differs from the README's %s", mk, v.masterKey)
			}
			if _, err := cf.DecryptMasterKey([]byte("wrong")); !errors.Is(err, configfile.ErrWrongPassword) {
				t.Errorf("wrong password: got %v, want ErrWrongPassword", err)
			}
			nt, ce := build(t, mk, cf.ContentCipher(), cf.IsFeatureFlagSet(configfile.FlagHKDF), nametransform.Options{
				PlaintextNames:     cf.IsFeatureFlagSet(configfile.FlagPlaintextNames),
				DeterministicNames: !cf.IsFeatureFlagSet(configfile.FlagDirIV),
				Raw64:              cf.IsFeatureFlagSet(configfile.FlagRaw64),
				LongNameMax:        cf.EffectiveLongNameMax(),
			})
			want := wantPlaintext(v.hasLongName)
			comparePlaintext(t, decryptTree(t, dir, nt, ce, want.symlinks), want)
		})
	}
}

// TestForwardVectorsWithMasterKey decrypts each vector with its master key
// and the command-line settings the README gives, without reading the config.
func TestForwardVectorsWithMasterKey(t *testing.T) {
	for _, v := range forwardVectors {
		t.Run(v.dir, func(t *testing.T) {
			dir := filepath.Join(vectorsDir, v.dir)
			nt, ce := build(t, parseMasterKey(t, v.masterKey), v.cipher, v.hkdf, nametransform.Options{
				PlaintextNames:     v.plaintextNames,
				DeterministicNames: v.deterministic,
				Raw64:              v.raw64,
			})
			want := wantPlaintext(v.hasLongName)
			comparePlaintext(t, decryptTree(t, dir, nt, ce, want.symlinks), want)
		})
	}
}

// TestTooOldVectorsRefused: v0.4–v0.6 filesystems must be refused with an
// error saying they are too old, before any password is asked.
func TestTooOldVectorsRefused(t *testing.T) {
	for _, dir := range []string{"v0.4", "v0.5", "v0.6", "v0.6-plaintextnames"} {
		t.Run(dir, func(t *testing.T) {
			_, err := configfile.Load(filepath.Join(vectorsDir, dir, configfile.ConfDefaultName))
			if err == nil {
				t.Fatal("config was accepted")
			}
			var ve *configfile.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("want a ValidationError, got %T: %v", err, err)
			}
			if !strings.Contains(err.Error(), "old") {
				t.Errorf("message does not say the filesystem is too old: %v", err)
			}
		})
	}
}

// TestVectorTableComplete makes sure no vector directory is silently skipped.
func TestVectorTableComplete(t *testing.T) {
	entries, err := os.ReadDir(vectorsDir)
	if err != nil {
		t.Skipf("shared vectors not found: %v", err)
	}
	known := map[string]bool{"content": true, "v0.4": true, "v0.5": true, "v0.6": true, "v0.6-plaintextnames": true,
		"v1.1-reverse": true, "v1.1-reverse-plaintextnames": true, "v1.3-reverse": true}
	for _, v := range forwardVectors {
		known[v.dir] = true
	}
	for _, e := range entries {
		if !known[e.Name()] {
			t.Errorf("vector %s is not covered by this test", e.Name())
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		if len(k) > 40 {
			k = k[:40] + "…"
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Package vectors checks the format core against the ciphertext directories
// written by the reference implementation (testdata/vectors), offline: no
// FUSE, only the config, name and content packages.
package vectors

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// plaintext is what the "content" directory of the vectors holds: regular
// files with their content, and symlinks with their target.
type plaintext struct {
	files    map[string]string
	symlinks map[string]string
}

func wantPlaintext(withLongName bool) plaintext {
	p := plaintext{
		files:    map[string]string{"status.txt": testutil.VectorContent},
		symlinks: testutil.VectorSymlinks(),
	}
	if withLongName {
		p.files[testutil.VectorLongName] = testutil.VectorContent
	}
	return p
}

// decryptTree decrypts the root directory of a ciphertext vector. A symlink
// is either a real symlink or flattened into a regular file holding the
// encrypted target; the caller's knowledge of which plaintext names are
// symlinks tells a flattened one from a file, and a real symlink must
// decrypt to one of those names.
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
		raw, realLink, err := testutil.ReadStored(filepath.Join(dir, cname))
		if err != nil {
			t.Fatal(err)
		}
		_, isLink := symlinkNames[name]
		if realLink && !isLink {
			t.Errorf("%s is a symlink on disk, but %q is not one of the plaintext's symlinks", cname, name)
			continue
		}
		if isLink {
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

// build makes the core with Go's ciphers (the backends are compared
// elsewhere) and wipes its keys when the test ends.
func build(t *testing.T, o coretest.Options) coretest.Core {
	t.Helper()
	o.Backend = cryptocore.BackendGo
	core := coretest.New(t, o)
	t.Cleanup(core.CC.Wipe)
	return core
}

func comparePlaintext(t *testing.T, got, want plaintext) {
	t.Helper()
	if !maps.Equal(got.files, want.files) {
		t.Errorf("files:\n got  %v\n want %v", keys(got.files), keys(want.files))
		for k, v := range want.files {
			if got.files[k] != v {
				t.Errorf("file %.40q: got %q, want %q", k, got.files[k], v)
			}
		}
	}
	if !maps.Equal(got.symlinks, want.symlinks) {
		t.Errorf("symlinks: got %v, want %v", got.symlinks, want.symlinks)
	}
}

// TestForwardVectorsWithPassword unlocks each vector's config with the
// password and decrypts everything with the settings the config dictates.
func TestForwardVectorsWithPassword(t *testing.T) {
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			dir := testutil.VectorDir(t, v.Name)
			cf, err := configfile.Load(filepath.Join(dir, configfile.ConfDefaultName))
			if err != nil {
				t.Fatal(err)
			}
			mk, err := cf.DecryptMasterKey([]byte(testutil.Password))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mk, v.Key(t)) {
				t.Fatalf("master key %x differs from the README's %s", mk, v.MasterKey)
			}
			if _, err := cf.DecryptMasterKey([]byte("wrong")); !errors.Is(err, configfile.ErrWrongPassword) {
				t.Errorf("wrong password: got %v, want ErrWrongPassword", err)
			}
			f := cf.Features()
			core := build(t, coretest.Options{MasterKey: mk, Cipher: f.Cipher, HKDF: f.HKDF,
				Names: nametransform.Options{
					PlaintextNames:     f.PlaintextNames,
					DeterministicNames: f.DeterministicNames,
					Raw64:              f.Raw64,
					LongNameMax:        f.LongNameMax,
				}})
			want := wantPlaintext(v.HasLongName)
			comparePlaintext(t, decryptTree(t, dir, core.NT, core.CE, want.symlinks), want)
		})
	}
}

// TestForwardVectorsWithMasterKey decrypts each vector with its master key
// and the command-line settings the README gives, without reading the config.
func TestForwardVectorsWithMasterKey(t *testing.T) {
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			dir := testutil.VectorDir(t, v.Name)
			core := build(t, coretest.VectorOptions(t, v))
			want := wantPlaintext(v.HasLongName)
			comparePlaintext(t, decryptTree(t, dir, core.NT, core.CE, want.symlinks), want)
		})
	}
}

// TestTooOldVectorsRefused: v0.4–v0.6 filesystems must be refused with an
// error saying they are too old, before any password is asked.
func TestTooOldVectorsRefused(t *testing.T) {
	for _, dir := range testutil.TooOldVectors() {
		t.Run(dir, func(t *testing.T) {
			_, err := configfile.Load(filepath.Join(testutil.VectorDir(t, dir), configfile.ConfDefaultName))
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
	entries, err := os.ReadDir(testutil.VectorsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	// The reverse vectors are plaintext, covered by the frontends' tests.
	known := map[string]bool{"content": true}
	for _, v := range testutil.ReverseVectors() {
		known[v.Name] = true
	}
	for _, n := range testutil.TooOldVectors() {
		known[n] = true
	}
	for _, v := range testutil.ForwardVectors() {
		known[v.Name] = true
	}
	for _, e := range entries {
		if !known[e.Name()] {
			t.Errorf("vector %s is not covered by this test", e.Name())
		}
	}
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

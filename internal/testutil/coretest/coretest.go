// Package coretest builds the format core that the frontends, fsck, the
// control socket and gocryptfs-xray are tested on: a CryptoCore with the
// NameTransform and ContentEnc on top, from the settings of a test or of a
// reference vector, and ciphertext files from recorded headers and nonces.
//
// The core itself is built by internal/fscore, as in the binary; this
// package only fills in the test defaults. It sits beside testutil rather
// than in it because it imports cryptocore, nametransform and contentenc
// (through fscore), whose own tests use testutil; like
// testutil it imports no FUSE frontend, so the frontends' tests can use it.
package coretest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
)

// Options select the core to build.
type Options struct {
	// MasterKey nil means testutil.MasterKey(), the TV master key.
	MasterKey []byte
	Cipher    cryptocore.ContentCipher
	Backend   cryptocore.Backend
	HKDF      bool
	Names     nametransform.Options
}

// Core is the format core of one filesystem, as the binary builds it.
type Core = fscore.Core

// New builds the core o describes with fscore.New, which the binary uses
// too; any error fails the test.
func New(t testing.TB, o Options) Core {
	t.Helper()
	mk := o.MasterKey
	if mk == nil {
		mk = testutil.MasterKey()
	}
	c, err := fscore.New(mk, fscore.Options{Cipher: o.Cipher, Backend: o.Backend, HKDF: o.HKDF, Names: o.Names})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// VectorOptions returns the settings of a -masterkey mount of v, which
// does not read its config.
func VectorOptions(t testing.TB, v testutil.Vector) Options {
	t.Helper()
	return Options{
		MasterKey: v.Key(t),
		Cipher:    cryptocore.ContentCipher(v.Cipher),
		HKDF:      v.HKDF,
		Names: nametransform.Options{
			PlaintextNames:     v.PlaintextNames,
			DeterministicNames: v.DeterministicNames,
			Raw64:              v.Raw64,
		},
	}
}

// EncryptFile rebuilds a ciphertext file from what a test vector recorded:
// the header's file ID and the random nonce of each 4096-byte block of
// plain (all hex).
func EncryptFile(t testing.TB, ce *contentenc.ContentEnc, idHex string, noncesHex []string, plain []byte) []byte {
	t.Helper()
	h := contentenc.FileHeader{Version: contentenc.CurrentVersion}
	copy(h.ID[:], testutil.MustHex(t, idHex))
	out := h.Pack()
	for i, n := range noncesHex {
		blk := plain[i*contentenc.DefaultBS : min((i+1)*contentenc.DefaultBS, len(plain))]
		var err error
		out, err = ce.EncryptBlockNonce(out, blk, uint64(i), h.ID[:], testutil.MustHex(t, n))
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	return out
}

// EncryptVectorFile rebuilds the ciphertext of f with the TV master key
// (HKDF on, as in every docs/format.md vector).
func EncryptVectorFile(t testing.TB, f testutil.VectorFile) []byte {
	t.Helper()
	ce := New(t, Options{Cipher: cryptocore.ContentCipher(f.Cipher), HKDF: true}).CE
	return EncryptFile(t, ce, f.ID, f.Nonces, f.Plain)
}

// PlainTree decrypts the forward-mode CIPHERDIR dir with c, without
// mounting, and returns one line per plaintext entry: "dir", "file:" and
// the content, "link:" and the target, or "other:" and the file type.
// Entries a mount hides are left out; anything that does not decrypt
// fails the test.
func PlainTree(t testing.TB, c Core, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	plainTree(t, c, dir, "", "", out)
	return out
}

func plainTree(t testing.TB, c Core, root, cdir, pdir string, out map[string]string) {
	t.Helper()
	fd, err := unix.Open(filepath.Join(root, cdir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var iv []byte
	if c.NT.UsesDirIV() {
		if iv, err = nametransform.ReadDirIVAt(fd); err != nil {
			t.Fatalf("%s: %v", cdir, err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(root, cdir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if k := c.NT.Classify(e.Name(), cdir == ""); k.Hidden() || k == nametransform.KindDot {
			continue
		}
		// A sync tool's copy of an internal file (an alternative
		// gocryptfs.diriv that -fsck -repair restored an IV from, say) is
		// never shown either.
		if c.NT.IsHiddenConflict(e.Name(), cdir == "") {
			continue
		}
		name, err := c.NT.DecryptNameAt(fd, e.Name(), iv)
		if err != nil {
			t.Fatalf("%s/%s: %v", cdir, e.Name(), err)
		}
		cp, pp := filepath.Join(cdir, e.Name()), filepath.Join(pdir, name)
		switch typ := e.Type(); {
		case typ.IsDir():
			out[pp] = "dir"
			plainTree(t, c, root, cp, pp, out)
		case typ.IsRegular():
			out[pp] = "file:" + string(DecryptFile(t, c.CE, filepath.Join(root, cp)))
		case typ&fs.ModeSymlink != 0:
			stored, err := os.Readlink(filepath.Join(root, cp))
			if err != nil {
				t.Fatal(err)
			}
			target, err := c.NT.DecryptSymlinkTarget(stored)
			if err != nil {
				t.Fatalf("%s: %v", cp, err)
			}
			out[pp] = "link:" + target
		default:
			out[pp] = "other:" + typ.String()
		}
	}
}

// DecryptFile decrypts a whole ciphertext file; any error fails the test.
func DecryptFile(t testing.TB, ce *contentenc.ContentEnc, path string) []byte {
	t.Helper()
	ct, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := []byte{}
	if len(ct) == 0 {
		return out
	}
	if len(ct) < contentenc.HeaderLen {
		t.Fatalf("%s: truncated header", path)
	}
	h, err := contentenc.ParseHeader(ct[:contentenc.HeaderLen])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ct = ct[contentenc.HeaderLen:]
	for b := uint64(0); len(ct) > 0; b++ {
		n := min(len(ct), ce.CipherBS())
		if out, err = ce.DecryptBlock(out, ct[:n], b, h.ID[:]); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ct = ct[n:]
	}
	return out
}

// CipherPath returns the ciphertext path (relative to the CIPHERDIR root)
// of the plaintext path plain, whose parent directories must exist; with
// create, the long-name companion files of hashed names are written.
func CipherPath(t testing.TB, c Core, root, plain string, create bool) string {
	t.Helper()
	cdir := ""
	if plain == "" {
		return ""
	}
	for _, comp := range strings.Split(plain, "/") {
		fd, err := unix.Open(filepath.Join(root, cdir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		var iv []byte
		if c.NT.UsesDirIV() {
			if iv, err = nametransform.ReadDirIVAt(fd); err != nil {
				unix.Close(fd)
				t.Fatalf("%s: %v", cdir, err)
			}
		}
		enc, err := c.NT.EncryptName(comp, iv)
		if err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		stored, long := c.NT.HashIfLong(enc)
		if long && create {
			err = c.NT.WriteLongNameAt(fd, stored, enc)
		}
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		cdir = filepath.Join(cdir, stored)
	}
	return cdir
}

// Mkdir creates the plaintext directory plain (with its IV) the way a
// mount would and returns its ciphertext path.
func Mkdir(t testing.TB, c Core, root, plain string) string {
	t.Helper()
	cp := CipherPath(t, c, root, plain, true)
	if err := os.Mkdir(filepath.Join(root, cp), 0o755); err != nil {
		t.Fatal(err)
	}
	if c.NT.UsesDirIV() {
		fd, err := unix.Open(filepath.Join(root, cp), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if _, err := nametransform.WriteDirIVAt(fd); err != nil {
			t.Fatal(err)
		}
	}
	return cp
}

// WriteFile creates the plaintext file plain holding data (fresh random
// file ID and nonces) and returns its ciphertext path.
func WriteFile(t testing.TB, c Core, root, plain string, data []byte) string {
	t.Helper()
	cp := CipherPath(t, c, root, plain, true)
	var ct []byte
	if len(data) > 0 {
		h := contentenc.RandomHeader(nil)
		ct = h.Pack()
		for b := uint64(0); len(data) > 0; b++ {
			n := min(len(data), contentenc.DefaultBS)
			ct = c.CE.EncryptBlock(ct, data[:n], b, h.ID[:])
			data = data[n:]
		}
	}
	if err := os.WriteFile(filepath.Join(root, cp), ct, 0o644); err != nil {
		t.Fatal(err)
	}
	return cp
}

// Symlink creates the plaintext symlink plain pointing to target and
// returns its ciphertext path.
func Symlink(t testing.TB, c Core, root, plain, target string) string {
	t.Helper()
	cp := CipherPath(t, c, root, plain, true)
	stored, err := c.NT.EncryptSymlinkTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stored, filepath.Join(root, cp)); err != nil {
		t.Fatal(err)
	}
	return cp
}

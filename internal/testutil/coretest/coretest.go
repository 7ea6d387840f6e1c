// Package coretest builds the format core that the frontends, fsck, the
// control socket and gocryptfs-xray are tested on: a CryptoCore with the
// NameTransform and ContentEnc on top, from the settings of a test or of a
// reference vector, and ciphertext files from recorded headers and nonces.
//
// It sits beside testutil rather than in it because it imports cryptocore,
// nametransform and contentenc, whose own tests use testutil; like
// testutil it imports no FUSE frontend, so the frontends' tests can use it.
package coretest

import (
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
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

// Core is the format core of one filesystem.
type Core struct {
	CC *cryptocore.CryptoCore
	NT *nametransform.NameTransform
	CE *contentenc.ContentEnc
}

// New builds the core o describes; any error fails the test.
func New(t testing.TB, o Options) Core {
	t.Helper()
	mk := o.MasterKey
	if mk == nil {
		mk = testutil.MasterKey()
	}
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: o.Cipher, Backend: o.Backend, HKDF: o.HKDF})
	if err != nil {
		t.Fatalf("cryptocore: %v", err)
	}
	nt, err := nametransform.New(cc, o.Names)
	if err != nil {
		t.Fatalf("nametransform: %v", err)
	}
	ce, err := contentenc.New(cc, contentenc.Options{})
	if err != nil {
		t.Fatalf("contentenc: %v", err)
	}
	return Core{CC: cc, NT: nt, CE: ce}
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

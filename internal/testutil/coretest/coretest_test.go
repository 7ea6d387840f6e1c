package coretest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
)

// TV-4 of docs/format.md: the default core with the TV master key names "a" in
// the root.
func TestNewTV4(t *testing.T) {
	c := New(t, Options{HKDF: true, Names: nametransform.Options{Raw64: true}})
	got, err := c.NT.EncryptName("a", testutil.MustHex(t, testutil.TV4RootIV))
	if err != nil || got != "RstaWk5xuBGCq94EGMhOoQ" {
		t.Errorf("EncryptName(a) = %q, %v", got, err)
	}
	if c.CC.Cipher != cryptocore.AESGCM {
		t.Errorf("cipher %v", c.CC.Cipher)
	}
}

func TestVectorOptions(t *testing.T) {
	for _, v := range testutil.AllVectors() {
		o := VectorOptions(t, v)
		if !bytes.Equal(o.MasterKey, v.Key(t)) || o.Cipher != cryptocore.ContentCipher(v.Cipher) || o.HKDF != v.HKDF ||
			o.Names.Raw64 != v.Raw64 || o.Names.PlaintextNames != v.PlaintextNames || o.Names.DeterministicNames != v.DeterministicNames {
			t.Errorf("%s: %+v", v.Name, o)
		}
		New(t, o)
	}
}

// A rebuilt file has the recorded header and nonces and decrypts back.
func TestEncryptFile(t *testing.T) {
	for _, c := range []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305} {
		t.Run(c.String(), func(t *testing.T) {
			ce := New(t, Options{Cipher: c, HKDF: true}).CE
			plain := bytes.Repeat([]byte("z"), 4097)
			nonce := bytes.Repeat([]byte{0x11}, c.NonceSize())
			nonces := []string{hex.EncodeToString(nonce), hex.EncodeToString(nonce)}
			out := EncryptFile(t, ce, "14383a4daf35c95c1f1cbd8afbd1b1ce", nonces, plain)
			h, err := contentenc.ParseHeader(out[:contentenc.HeaderLen])
			if err != nil || hex.EncodeToString(h.ID[:]) != "14383a4daf35c95c1f1cbd8afbd1b1ce" {
				t.Fatalf("header %x, %v", out[:contentenc.HeaderLen], err)
			}
			if !bytes.Equal(out[contentenc.HeaderLen:contentenc.HeaderLen+len(nonce)], nonce) {
				t.Error("first block does not start with the recorded nonce")
			}
			back, err := ce.DecryptBlocks(nil, out[contentenc.HeaderLen:], 0, h.ID[:])
			if err != nil || !bytes.Equal(back, plain) {
				t.Errorf("decrypts to %d bytes, %v", len(back), err)
			}
		})
	}
}

// The rebuilt files are those of the vectors, byte for byte or by hash.
func TestEncryptVectorFile(t *testing.T) {
	for _, f := range testutil.VectorFiles() {
		out := EncryptVectorFile(t, f)
		switch {
		case f.CipherHex != "":
			if !bytes.Equal(out, testutil.MustHex(t, f.CipherHex)) {
				t.Errorf("%s: %x", f.Name, out)
			}
		case f.CipherSHA256 != "":
			if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != f.CipherSHA256 {
				t.Errorf("%s: SHA-256 %x", f.Name, sum)
			}
		}
	}
}

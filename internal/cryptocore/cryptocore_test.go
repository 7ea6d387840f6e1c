package cryptocore

import (
	"bytes"
	"encoding/hex"
	"testing"

	"gocryptfs/internal/testutil"
)

// TV-3 of docs/format.md.
func TestDerivedKeysTV3(t *testing.T) {
	mk := testutil.MasterKey()
	cases := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"EME", func() ([]byte, error) { return NameKey(mk, true) }, "59366f708e4d4ed892d6bd6ca0de6e927040808b21bd0e1a2753ea365aeaf6c9"},
		{"GCM", func() ([]byte, error) { return ContentKey(mk, AESGCM, true) }, "17df772cfec9d28b9ede3c753d0010ba9f199655acfc3b78dd3b61b5dd5f36c5"},
		{"SIV", func() ([]byte, error) { return ContentKey(mk, AESSIV, true) }, "90be6449231c24d9d308f1772b47953b6acf97f9e7876a16172e019977f3b7e02419aaf86d684593cf2b43008422ad6726b83aaf0897186fb8a8cbd04854bd3c"},
		{"XChaCha", func() ([]byte, error) { return ContentKey(mk, XChaCha20Poly1305, true) }, "957caa5a8d2a9189b77f2fcb17707c1fc6ce862c0061f9d1db29a3b71eb7ca0d"},
		{"legacy SIV", func() ([]byte, error) { return ContentKey(mk, AESSIV, false) }, "3d94eea49c580aef816935762be049559d6d1440dede12e6a125f1841fff8e6fa9d71862a3e5746b571be3d187b0041046f52ebd850c7cbd5fde8ee38473b649"},
		{"legacy GCM", func() ([]byte, error) { return ContentKey(mk, AESGCM, false) }, hex.EncodeToString(mk)},
		{"legacy EME", func() ([]byte, error) { return NameKey(mk, false) }, hex.EncodeToString(mk)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.got()
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != c.want {
				t.Errorf("got %x, want %s", got, c.want)
			}
		})
	}
	if _, err := ContentKey(mk, XChaCha20Poly1305, false); err == nil {
		t.Error("XChaCha20-Poly1305 without HKDF must be refused")
	}
	if _, err := ContentKey(mk[:31], AESGCM, true); err == nil {
		t.Error("short master key must be refused")
	}
}

func TestNewRoundTrip(t *testing.T) {
	mk := bytes.Repeat([]byte{7}, KeyLen)
	for _, c := range []ContentCipher{AESGCM, AESSIV, XChaCha20Poly1305} {
		cc, err := New(mk, Options{Cipher: c, Backend: BackendGo, HKDF: true})
		if err != nil {
			t.Fatal(err)
		}
		if cc.AEAD.NonceSize() != c.NonceSize() {
			t.Fatalf("%v: nonce size %d, want %d", c, cc.AEAD.NonceSize(), c.NonceSize())
		}
		nonce := make([]byte, c.NonceSize())
		cc.Nonces.Fill(nonce)
		ad := []byte("associated")
		ct := cc.AEAD.Seal(nil, nonce, []byte("hello"), ad)
		pt, err := cc.AEAD.Open(nil, nonce, ct, ad)
		if err != nil || string(pt) != "hello" {
			t.Fatalf("%v: round trip failed: %q %v", c, pt, err)
		}
		ct[len(ct)-1] ^= 1
		if _, err := cc.AEAD.Open(nil, nonce, ct, ad); err == nil {
			t.Fatalf("%v: tampered ciphertext accepted", c)
		}
		cc.Wipe()
	}
}

func TestNonceSourceNeverRepeats(t *testing.T) {
	n := NewNonceSource()
	seen := map[string]bool{}
	b := make([]byte, 16)
	for i := 0; i < 3*nonceBatch/16; i++ {
		n.Fill(b)
		if seen[string(b)] {
			t.Fatal("nonce repeated")
		}
		seen[string(b)] = true
	}
}

func TestNonceSourceNoAlloc(t *testing.T) {
	n := NewNonceSource()
	b := make([]byte, 24)
	if a := testing.AllocsPerRun(1000, func() { n.Fill(b) }); a != 0 {
		t.Fatalf("Fill allocates %v times per call", a)
	}
}

// testutil.Cipher mirrors ContentCipher (testutil cannot import this
// package), so that the vector tables convert with ContentCipher(c).
func TestTestutilCipherOrder(t *testing.T) {
	for tc, c := range map[testutil.Cipher]ContentCipher{testutil.AESGCM: AESGCM, testutil.AESSIV: AESSIV, testutil.XChaCha20Poly1305: XChaCha20Poly1305} {
		if ContentCipher(tc) != c {
			t.Errorf("testutil's %s converts to %s", c, ContentCipher(tc))
		}
	}
}

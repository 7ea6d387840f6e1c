package stupidgcm

import (
	"bytes"
	"crypto/cipher"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestFormatVectors opens files written by the reference implementation
// (docs/format.md TV-7 hello.txt and TV-10 hello.txt; keys from TV-3), through
// Open and through OpenBatch, and checks that sealing with the same nonce
// reproduces them.
func TestFormatVectors(t *testing.T) {
	skipNoOpenSSL(t)
	cases := []struct {
		name, key, fileID, block string
		ctor                     func([]byte) (cipher.AEAD, error)
	}{
		{"AES-GCM TV-7", "17df772cfec9d28b9ede3c753d0010ba9f199655acfc3b78dd3b61b5dd5f36c5",
			"420b04fae4bc38a8548393d366b9d635",
			"e55fd73199ac809d2617ce9bb26a19c1 38544c8e993d38c6691cda11 a7979226216685edf5d656c545c052f0", NewAESGCM},
		{"XChaCha TV-10", "957caa5a8d2a9189b77f2fcb17707c1fc6ce862c0061f9d1db29a3b71eb7ca0d",
			"d2091d7026e38b4d26924c28843f4902",
			"9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d 0a25c6e06b42a2504d6f2bab 3ce9baa002d31e96f6a2bb7113a9e52d", NewXChaCha20Poly1305},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := mustNew(t, c.ctor, testutil.MustHex(t, c.key))
			fid, block := testutil.MustHex(t, c.fileID), testutil.MustHex(t, c.block)
			ns := a.NonceSize()
			ad := append(make([]byte, 8), fid...)
			pt, err := a.Open(nil, block[:ns], block[ns:], ad)
			if err != nil || string(pt) != "hello world\n" {
				t.Fatalf("Open: %q %v", pt, err)
			}
			if got := a.Seal(nil, block[:ns], pt, ad); !bytes.Equal(got, block[ns:]) {
				t.Fatalf("Seal: %x", got)
			}
			pt, err = OpenBatch(a, nil, block, 4096, 0, fid)
			if err != nil || string(pt) != "hello world\n" {
				t.Fatalf("OpenBatch: %q %v", pt, err)
			}
			if got := SealBatch(a, nil, block[:ns], pt, 4096, 0, fid); !bytes.Equal(got, block) {
				t.Fatalf("SealBatch: %x", got)
			}
		})
	}
}

package testutil

import (
	"encoding/hex"
	"strings"
	"testing"
)

// MasterKeyHex is the master key of every docs/format.md test vector (TV-3 and
// on): the bytes 00, 01, …, 1f.
const MasterKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// MasterKey returns a fresh copy of the test vectors' master key, so that a
// test may wipe or modify it.
func MasterKey() []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i)
	}
	return k
}

// hexNoise is what the spec and the vectors README put between hex digits.
var hexNoise = strings.NewReplacer(" ", "", "\n", "", "\t", "", "-", "")

// MustHex decodes hex as the spec and the vectors README print it: spaces,
// tabs, newlines and dashes between the digits are ignored. Bad input
// fails the test.
func MustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(hexNoise.Replace(s))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// Cipher names a content cipher of the format. The constants have the
// values of cryptocore.ContentCipher's, so cryptocore.ContentCipher(c)
// converts one; this package cannot import cryptocore (cryptocore's own
// tests import this package), and cryptocore's tests check that the two
// agree.
type Cipher int

// The content ciphers, in cryptocore's order.
const (
	AESGCM Cipher = iota
	AESSIV
	XChaCha20Poly1305
)

package contentenc

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
)

// testMK is the master key of every FORMAT.md test vector.
const testMK = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

var allCiphers = []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305}

// unhex decodes hex that may contain spaces, newlines and dashes (as the
// spec and the vectors README print it).
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "-", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// newCE builds a ContentEnc for cipher c from a hex master key, with the Go
// backend.
func newCE(t testing.TB, c cryptocore.ContentCipher, mkHex string, hkdf bool) *ContentEnc {
	t.Helper()
	cc, err := cryptocore.New(unhex(t, mkHex), cryptocore.Options{Cipher: c, Backend: cryptocore.BackendGo, HKDF: hkdf})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := New(cc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ce
}

// pathIV is FORMAT.md 9.1's pathiv, for building reverse-mode inputs (the
// real implementation belongs to the reverse frontend).
func pathIV(path, purpose string) []byte {
	h := sha256.Sum256([]byte(path + "\x00" + purpose))
	return h[:16]
}

// pattern returns n bytes of a fixed, non-repeating-per-block pattern.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i/4096) ^ seed
	}
	return b
}

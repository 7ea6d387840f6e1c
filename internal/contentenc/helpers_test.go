package contentenc

import (
	"crypto/sha256"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

var allCiphers = []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305}

// newCE builds a ContentEnc for cipher c from a hex master key, with the Go
// backend.
func newCE(t testing.TB, c cryptocore.ContentCipher, mkHex string, hkdf bool) *ContentEnc {
	t.Helper()
	cc, err := cryptocore.New(testutil.MustHex(t, mkHex), cryptocore.Options{Cipher: c, Backend: cryptocore.BackendGo, HKDF: hkdf})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := New(cc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ce
}

// pathIV is docs/format.md 9.1's pathiv, for building reverse-mode inputs (the
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

package nametransform

import (
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// newCC builds a CryptoCore from the vector master key.
func newCC(t testing.TB, c cryptocore.ContentCipher, hkdf bool) *cryptocore.CryptoCore {
	t.Helper()
	return newCCKey(t, testutil.MasterKey(), c, hkdf)
}

func newCCKey(t testing.TB, mk []byte, c cryptocore.ContentCipher, hkdf bool) *cryptocore.CryptoCore {
	t.Helper()
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: c, Backend: cryptocore.BackendGo, HKDF: hkdf})
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// newNT returns a NameTransform for the vector master key.
func newNT(t testing.TB, c cryptocore.ContentCipher, hkdf bool, opts Options) *NameTransform {
	t.Helper()
	n, err := New(newCC(t, c, hkdf), opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Options of the default filesystem (HKDF, Raw64, DirIV).
var defaultOpts = Options{Raw64: true}

func rep(c string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c[0]
	}
	return string(b)
}

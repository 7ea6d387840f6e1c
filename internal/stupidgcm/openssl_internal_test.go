//go:build !without_openssl && cgo

package stupidgcm

import (
	"crypto/cipher"
	"fmt"
	"testing"
)

func hchacha20(key, nonce []byte) []byte {
	out := make([]byte, 32)
	hchacha20C(out, key, nonce)
	return out
}

func keyIsZero(a cipher.AEAD) bool {
	return a.(*AEAD).st.key == [KeySize]byte{}
}

// BenchmarkContexts compares pooled, pre-keyed contexts with creating and
// freeing an EVP_CIPHER_CTX in every call.
func BenchmarkContexts(b *testing.B) {
	algs := []struct {
		name string
		alg  algID
	}{{"AES-256-GCM", algAESGCM}, {"XChaCha20-Poly1305", algXChaCha}}
	for _, al := range algs {
		for _, perCall := range []bool{false, true} {
			mode := "pool"
			if perCall {
				mode = "new-per-call"
			}
			for _, size := range []int{16, 4096} {
				b.Run(fmt.Sprintf("%s/%s/%d", al.name, mode, size), func(b *testing.B) {
					a, err := newAEAD(al.alg, make([]byte, 32), perCall)
					if err != nil {
						b.Fatal(err)
					}
					defer a.Wipe()
					nonce, ad, pt := make([]byte, a.NonceSize()), make([]byte, 24), make([]byte, size)
					buf := make([]byte, 0, size+16)
					loopCPU(b, size, func() { a.Seal(buf, nonce, pt, ad) })
				})
			}
		}
	}
}

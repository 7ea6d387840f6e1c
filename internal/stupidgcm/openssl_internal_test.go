//go:build !without_openssl && cgo

package stupidgcm

import (
	"crypto/cipher"
	"fmt"
	"testing"

	"gocryptfs/internal/benchutil"
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
					benchutil.LoopCPU(b, size, func() { a.Seal(buf, nonce, pt, ad) })
				})
			}
		}
	}
}

// loopOnly hides the batch methods so that SealBatch/OpenBatch loop over Seal/Open.
type loopOnly struct{ cipher.AEAD }

// BenchmarkBatch compares 256 blocks sealed/opened in one cgo call with
// 256 Seal/Open calls, for tiny blocks (where the per-call overhead is all
// there is) and for 4096-byte blocks. Loop and batch alternate under
// -count, which keeps them comparable on a loaded machine.
func BenchmarkBatch(b *testing.B) {
	const blocks = 256
	algs := []struct {
		name string
		alg  algID
	}{{"AES-256-GCM", algAESGCM}, {"XChaCha20-Poly1305", algXChaCha}}
	for _, al := range algs {
		a, err := newAEAD(al.alg, make([]byte, 32), false)
		if err != nil {
			b.Fatal(err)
		}
		for _, bs := range []int{16, 4096} {
			ns := a.NonceSize()
			pt := make([]byte, blocks*bs)
			nonces := make([]byte, blocks*ns)
			fid := make([]byte, 16)
			ct := a.SealBatch(nil, nonces, pt, bs, 0, fid)
			out := make([]byte, 0, len(ct))
			for _, mode := range []string{"loop", "batch"} {
				var impl cipher.AEAD = a
				if mode == "loop" {
					impl = loopOnly{a}
				}
				b.Run(fmt.Sprintf("%s/Seal/%d/%s", al.name, bs, mode), func(b *testing.B) {
					benchutil.LoopCPU(b, len(pt), func() { SealBatch(impl, out[:0], nonces, pt, bs, 0, fid) })
				})
				b.Run(fmt.Sprintf("%s/Open/%d/%s", al.name, bs, mode), func(b *testing.B) {
					benchutil.LoopCPU(b, len(pt), func() {
						if _, err := OpenBatch(impl, out[:0], ct, bs, 0, fid); err != nil {
							b.Fatal(err)
						}
					})
				})
			}
		}
	}
}

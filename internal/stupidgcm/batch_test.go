package stupidgcm

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// goOnly hides the batch methods of an AEAD so that the generic loop runs.
type goOnly struct{ cipher.AEAD }

// batchImpls returns, for each cipher, the AEADs whose batch paths are
// tested: the Go implementation (generic loop) and, when compiled in,
// OpenSSL's SealBatch/OpenBatch. All share one key.
func batchImpls(t *testing.T, p pair, key []byte) map[string]cipher.AEAD {
	m := map[string]cipher.AEAD{"Go": mustNew(t, p.goimp, key)}
	if Available {
		o := mustNew(t, p.ossl, key)
		m["OpenSSL"] = o
		m["OpenSSL-loop"] = goOnly{o}
	}
	return m
}

// refSeal is the layout of docs/format.md 4.3 written out block by block.
func refSeal(a cipher.AEAD, nonces, pt []byte, bs int, first uint64, fid []byte) []byte {
	var out []byte
	ns := a.NonceSize()
	for i := 0; i*bs < len(pt); i++ {
		blk := pt[i*bs : min((i+1)*bs, len(pt))]
		nonce := nonces[i*ns : (i+1)*ns]
		ad := binary.BigEndian.AppendUint64(nil, first+uint64(i))
		ad = append(ad, fid...)
		out = append(out, nonce...)
		out = a.Seal(out, nonce, blk, ad)
	}
	return out
}

func TestBatch(t *testing.T) {
	const bs = 4096
	lengths := []int{0, 1, bs - 1, bs, bs + 1, 3*bs + 17, 16 * bs}
	for _, p := range pairs {
		key := randBytes(32)
		impls := batchImpls(t, p, key)
		ref := impls["Go"]
		ns := ref.NonceSize()
		for name, a := range impls {
			for _, n := range lengths {
				t.Run(fmt.Sprintf("%s/%s/%d", p.name, name, n), func(t *testing.T) {
					pt, fid := randBytes(n), randBytes(16)
					nblocks := (n + bs - 1) / bs
					nonces := randBytes(nblocks * ns)
					first := uint64(1<<40 + 5)
					want := refSeal(ref, nonces, pt, bs, first, fid)

					got := SealBatch(a, []byte("pre"), nonces, pt, bs, first, fid)
					if string(got[:3]) != "pre" || !bytes.Equal(got[3:], want) {
						t.Fatal("SealBatch differs from block-wise Seal")
					}
					// In place: plaintext at the start of a buffer with
					// room for the expansion.
					buf := make([]byte, len(want))
					copy(buf, pt)
					got = SealBatch(a, buf[:0], nonces, buf[:n], bs, first, fid)
					if !bytes.Equal(got, want) || (n > 0 && &got[0] != &buf[0]) {
						t.Fatal("in-place SealBatch wrong")
					}

					dec, err := OpenBatch(a, []byte("pre"), want, bs, first, fid)
					if err != nil || string(dec[:3]) != "pre" || !bytes.Equal(dec[3:], pt) {
						t.Fatalf("OpenBatch: %v", err)
					}
					got, err = OpenBatch(a, buf[:0], buf, bs, first, fid)
					if err != nil || !bytes.Equal(got, pt) || (n > 0 && &got[0] != &buf[0]) {
						t.Fatalf("in-place OpenBatch: %v", err)
					}
					if nblocks == 0 {
						return
					}
					// Wrong first block number: block 0 fails.
					if _, err := OpenBatch(a, nil, want, bs, first+1, fid); !isBlockErr(err, 0, first+1) {
						t.Fatalf("wrong block number: %v", err)
					}
					// Corrupt the last block, in place and not.
					k := nblocks - 1
					for _, inPlace := range []bool{false, true} {
						c := bytes.Clone(want)
						c[k*(ns+bs+16)+ns] ^= 0x80
						var dst []byte
						if inPlace {
							dst = c[:0]
						} else {
							dst = make([]byte, 0, n)
						}
						got, err := OpenBatch(a, dst, c, bs, first, fid)
						if !isBlockErr(err, k, first+uint64(k)) {
							t.Fatalf("corrupt block %d (in place %v): %v", k, inPlace, err)
						}
						if !bytes.Equal(got, pt[:k*bs]) {
							t.Fatal("blocks before the bad one not returned")
						}
						if tail := dst[k*bs : n]; !bytes.Equal(tail, make([]byte, len(tail))) {
							t.Fatal("plaintext of the failed block left in dst")
						}
					}
					// A trailing fragment too short for nonce and tag.
					short := append(bytes.Clone(want), make([]byte, ns+15)...)
					if n%bs != 0 {
						short = short[:len(want)-(n%bs)-ns-1]
						k = nblocks - 1
					} else {
						k = nblocks
					}
					got, err = OpenBatch(a, nil, short, bs, first, fid)
					if !isBlockErr(err, k, first+uint64(k)) || !bytes.Equal(got, pt[:k*bs]) {
						t.Fatalf("short trailing block: %v", err)
					}
				})
			}
		}
	}
}

func isBlockErr(err error, idx int, block uint64) bool {
	var be *BlockError
	return errors.As(err, &be) && be.Index == idx && be.Block == block && errors.Is(err, ErrAuth)
}

func TestBatchPanics(t *testing.T) {
	for _, p := range pairs {
		for name, a := range batchImpls(t, p, randBytes(32)) {
			buf := make([]byte, 3*4096+200)
			nonces := make([]byte, 3*a.NonceSize())
			cases := map[string]func(){
				"few nonces":    func() { SealBatch(a, nil, nonces[:1], buf[:4096], 4096, 0, nil) },
				"zero bs":       func() { SealBatch(a, nil, nonces, buf[:10], 0, 0, nil) },
				"seal overlap":  func() { SealBatch(a, buf[1:1], nonces, buf[:4096], 4096, 0, nil) },
				"open overlap":  func() { OpenBatch(a, buf[1:1], buf[:4200], 4096, 0, nil) },
				"nonce overlap": func() { SealBatch(a, buf[:0], buf[:a.NonceSize()], make([]byte, 10), 4096, 0, nil) },
			}
			for cn, f := range cases {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s/%s: %s did not panic", p.name, name, cn)
						}
					}()
					f()
				}()
			}
		}
	}
}

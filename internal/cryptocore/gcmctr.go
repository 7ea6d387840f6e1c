package cryptocore

import (
	"crypto/cipher"
	"encoding/binary"
)

// AES-CTR through AES-GCM.
//
// Go offers fast (pipelined assembly) AES-CTR only through cipher.NewCTR,
// which allocates a stream per message, and the single-block Encrypt is
// latency-bound. AES-GCM's encryption, however, is exactly CTR mode: with
// a 16-byte nonce N, GCM derives J0 = GHASH_H(N ‖ L) with
// L = 0^64 ‖ BE64(128), i.e. J0 = N·H² ⊕ L·H in GF(2^128), and XORs
// plaintext block j with E(inc32^(j+1)(J0)). For an AES-SIV counter Q
// (bit 31 cleared, so adding up to 2^31 blocks never carries out of the low
// 32 bits, and inc32 equals the 128-bit increment), choosing
// J0 = Q[0:12] ‖ BE32(Q[12:16]−1) makes block j use E(Q+j). The nonce is
// N = J0·H⁻² ⊕ L·H⁻¹. Sealing then yields the CTR ciphertext followed by a
// tag that is simply discarded.
//
// J0 is derived from the SIV, which is public (stored in the ciphertext),
// so the multiplication's data flow reveals nothing secret; it is
// written branch-free anyway.

// gf128 is an element of GCM's field: hi holds bytes 0..7 big-endian, lo
// bytes 8..15; the most significant bit of hi is the coefficient of x^0.
type gf128 struct{ hi, lo uint64 }

func gfLoad(b []byte) gf128 {
	return gf128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:16])}
}

// mulX multiplies by x: a right shift in GCM's bit order, reducing with
// R = 0xe1 ‖ 0^120.
func (a gf128) mulX() gf128 {
	carry := a.lo & 1
	return gf128{a.hi>>1 ^ (0xe1<<56)&-carry, a.lo>>1 | a.hi<<63}
}

// gfMul is the textbook bitwise GF(2^128) product (NIST SP 800-38D
// algorithm 1), used only when setting up a key.
func gfMul(x, y gf128) gf128 {
	var z gf128
	v := y
	for i := 0; i < 128; i++ {
		w := x.hi
		if i >= 64 {
			w = x.lo
		}
		m := -(w >> (63 - uint(i%64)) & 1)
		z.hi ^= v.hi & m
		z.lo ^= v.lo & m
		v = v.mulX()
	}
	return z
}

// gfInv returns a^(2^128−2) = a⁻¹ (for a ≠ 0).
func gfInv(a gf128) gf128 {
	r := gf128{hi: 1 << 63} // the field's 1
	sq := a
	for i := 1; i < 128; i++ {
		sq = gfMul(sq, sq)
		r = gfMul(r, sq)
	}
	return r
}

// gcmNonceTable maps a wanted J0 to the GCM nonce that produces it:
// pow[k] = x^k · H⁻², so J0·H⁻² is the XOR of pow[k] over J0's set bits.
type gcmNonceTable struct {
	pow [128]gf128
	add gf128 // L·H⁻¹
}

// newGCMCTR returns AES-GCM with 16-byte nonces over block and the table
// for its nonces, or nil, nil if the hash key H = E(0^128) is zero (then
// there is no inverse; probability 2^-128).
func newGCMCTR(block cipher.Block) (cipher.AEAD, *gcmNonceTable, error) {
	var hb [16]byte
	block.Encrypt(hb[:], hb[:])
	h := gfLoad(hb[:])
	clear(hb[:])
	if h == (gf128{}) {
		return nil, nil, nil
	}
	g, err := cipher.NewGCMWithNonceSize(block, 16)
	if err != nil {
		return nil, nil, err
	}
	hInv := gfInv(h)
	t := &gcmNonceTable{add: gfMul(gf128{lo: 128}, hInv)}
	t.pow[0] = gfMul(hInv, hInv)
	for k := 1; k < 128; k++ {
		t.pow[k] = t.pow[k-1].mulX()
	}
	return g, t, nil
}

// nonceFor writes to n the GCM nonce whose first keystream block is E(q).
func (t *gcmNonceTable) nonceFor(n, q *[16]byte) {
	hi := binary.BigEndian.Uint64(q[:8])
	lo := binary.BigEndian.Uint64(q[8:])
	lo = lo&^0xffffffff | uint64(uint32(lo)-1) // J0: low 32 bits minus one
	acc := t.add
	for k := 0; k < 64; k++ {
		m := -(hi >> (63 - uint(k)) & 1)
		acc.hi ^= t.pow[k].hi & m
		acc.lo ^= t.pow[k].lo & m
		m = -(lo >> (63 - uint(k)) & 1)
		acc.hi ^= t.pow[64+k].hi & m
		acc.lo ^= t.pow[64+k].lo & m
	}
	binary.BigEndian.PutUint64(n[:8], acc.hi)
	binary.BigEndian.PutUint64(n[8:], acc.lo)
}

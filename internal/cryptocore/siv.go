package cryptocore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
)

// ErrSIVAuth is returned by the AES-SIV Open when the synthetic IV does not
// match, i.e. the ciphertext, nonce or associated data was modified.
var ErrSIVAuth = errors.New("cipher: message authentication failed")

// sivAEAD is RFC 5297 AES-SIV adapted to cipher.AEAD the way gocryptfs uses
// it (docs/format.md 5): the S2V vector is [ad, nonce, plaintext] and the output
// is SIV ‖ C. Both AES key schedules and the CMAC constants are computed
// once; per-call state lives in pooled scratch space, so Seal and Open do
// not allocate. Safe for concurrent use.
type sivAEAD struct {
	mac cipher.Block // S2V (CMAC) key: first half of the key
	ctr cipher.Block // CTR key: second half
	// k1, k2 are the CMAC subkeys; d0 = CMAC(K, 0^128), the constant start
	// of S2V.
	k1, k2, d0 [16]byte
	scratch    sync.Pool // *sivScratch
	// ctrGCM and ctrNonce turn AES-GCM into a fast, allocation-free
	// AES-CTR (see gcmctr.go); ctrGCM is nil in the unlikely case that
	// the GHASH key is zero, and CTR then runs block by block.
	ctrGCM   cipher.AEAD
	ctrNonce *gcmNonceTable
}

// sivScratch holds the per-call blocks. Slices of them are passed to the
// cipher.Block interface, which would make stack arrays escape to the heap.
type sivScratch struct {
	x, tmp, d, v, ctr, n [16]byte
	tail                 [32]byte
	ks                   [sivKeystream]byte
}

// sivKeystream is how much CTR keystream is produced before XORing it in.
const sivKeystream = 128

// NewAESSIV returns AES-SIV-512 as a cipher.AEAD with 16-byte nonces and a
// 16-byte overhead: Seal outputs SIV ‖ C, with the S2V vector
// [ad, nonce, plaintext]. key must be 64 bytes (S2V key ‖ CTR key); it is
// not retained.
func NewAESSIV(key []byte) (cipher.AEAD, error) {
	if len(key) != 64 {
		return nil, errors.New("AES-SIV key must be 64 bytes")
	}
	mac, err := aes.NewCipher(key[:32])
	if err != nil {
		return nil, err
	}
	ctr, err := aes.NewCipher(key[32:])
	if err != nil {
		return nil, err
	}
	s := &sivAEAD{mac: mac, ctr: ctr}
	s.scratch.New = func() any { return new(sivScratch) }
	// CMAC subkeys (RFC 4493 2.3): L = E(0), K1 = dbl(L), K2 = dbl(K1).
	var l [16]byte
	mac.Encrypt(l[:], l[:])
	s.k1 = dbl(l)
	s.k2 = dbl(s.k1)
	clear(l[:])
	sc := new(sivScratch)
	s.cmac(sc, make([]byte, 16), nil)
	s.d0 = sc.x
	clear(sc.x[:])
	s.ctrGCM, s.ctrNonce, err = newGCMCTR(ctr)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sivAEAD) NonceSize() int { return 16 }
func (s *sivAEAD) Overhead() int  { return 16 }

// dbl is multiplication by x in GF(2^128) (RFC 5297 2.3), constant time.
func dbl(in [16]byte) [16]byte {
	hi := binary.BigEndian.Uint64(in[:8])
	lo := binary.BigEndian.Uint64(in[8:])
	carry := hi >> 63
	hi = hi<<1 | lo>>63
	lo = lo<<1 ^ (0x87 & -carry)
	var out [16]byte
	binary.BigEndian.PutUint64(out[:8], hi)
	binary.BigEndian.PutUint64(out[8:], lo)
	return out
}

// xor16 sets dst = dst XOR src for 16-byte blocks.
func xor16(dst *[16]byte, src []byte) {
	_ = src[15]
	binary.LittleEndian.PutUint64(dst[:8], binary.LittleEndian.Uint64(dst[:8])^binary.LittleEndian.Uint64(src[:8]))
	binary.LittleEndian.PutUint64(dst[8:], binary.LittleEndian.Uint64(dst[8:])^binary.LittleEndian.Uint64(src[8:16]))
}

// cmac computes AES-CMAC (RFC 4493) of m into sc.x. If xorEnd is not nil
// (len(m) >= 16), the last 16 bytes of m are XORed with it on the fly —
// S2V's "xorend" without copying the message.
func (s *sivAEAD) cmac(sc *sivScratch, m []byte, xorEnd *[16]byte) {
	clear(sc.x[:])
	n := len(m)
	last := 0 // offset of the final (possibly partial) block
	if n > 0 {
		last = (n - 1) / 16 * 16
	}
	xs := n - 16 // where xorEnd starts
	for off := 0; off < last; off += 16 {
		blk := m[off : off+16]
		if xorEnd != nil && off+16 > xs {
			copy(sc.tmp[:], blk)
			for i := max(xs-off, 0); i < 16; i++ {
				sc.tmp[i] ^= xorEnd[off+i-xs]
			}
			blk = sc.tmp[:]
		}
		xor16(&sc.x, blk)
		s.mac.Encrypt(sc.x[:], sc.x[:])
	}
	rem := m[last:]
	clear(sc.tmp[:])
	copy(sc.tmp[:], rem)
	if xorEnd != nil {
		for i := max(xs-last, 0); i < len(rem); i++ {
			sc.tmp[i] ^= xorEnd[last+i-xs]
		}
	}
	if len(rem) == 16 {
		xor16(&sc.tmp, s.k1[:])
	} else {
		sc.tmp[len(rem)] = 0x80
		xor16(&sc.tmp, s.k2[:])
	}
	xor16(&sc.x, sc.tmp[:])
	s.mac.Encrypt(sc.x[:], sc.x[:])
}

// s2v computes the synthetic IV of [ad, nonce, plaintext] into sc.v
// (RFC 5297 2.4).
func (s *sivAEAD) s2v(sc *sivScratch, ad, nonce, plaintext []byte) {
	sc.d = s.d0
	for _, str := range [2][]byte{ad, nonce} {
		s.cmac(sc, str, nil)
		sc.d = dbl(sc.d)
		xor16(&sc.d, sc.x[:])
	}
	if len(plaintext) >= 16 {
		s.cmac(sc, plaintext, &sc.d)
	} else {
		sc.d = dbl(sc.d)
		clear(sc.tmp[:])
		copy(sc.tmp[:], plaintext)
		sc.tmp[len(plaintext)] = 0x80
		xor16(&sc.d, sc.tmp[:])
		s.cmac(sc, sc.d[:], nil)
	}
	sc.v = sc.x
}

// gcmCTRMin is the length from which CTR goes through AES-GCM: below it
// the block-by-block loop is as fast.
const gcmCTRMin = 128

// ctrXOR XORs buf in place with the AES-CTR keystream for sc.v with bits
// 31 and 63 cleared (RFC 5297 2.5), using a 128-bit counter.
func (s *sivAEAD) ctrXOR(sc *sivScratch, buf []byte) {
	q := sc.v
	q[8] &= 0x7f
	q[12] &= 0x7f
	hi := binary.BigEndian.Uint64(q[:8])
	lo := binary.BigEndian.Uint64(q[8:])
	if len(buf) >= gcmCTRMin && s.ctrGCM != nil {
		// GCM writes a 16-byte tag after its output: give it a multiple
		// of 16 bytes that leaves room for the tag inside buf, and save
		// the bytes the tag overwrites.
		m := (len(buf) - 16) &^ 15
		rest := copy(sc.tail[:], buf[m:])
		s.ctrNonce.nonceFor(&sc.n, &q)
		s.ctrGCM.Seal(buf[:0], sc.n[:], buf[:m], nil)
		copy(buf[m:], sc.tail[:rest])
		buf = buf[m:]
		// Bit 63 of q is clear, so this cannot carry into hi.
		lo += uint64(m / 16)
	}
	for len(buf) > 0 {
		n := min(len(buf), sivKeystream)
		for j := 0; j < n; j += 16 {
			binary.BigEndian.PutUint64(sc.ctr[:8], hi)
			binary.BigEndian.PutUint64(sc.ctr[8:], lo)
			s.ctr.Encrypt(sc.ks[j:j+16], sc.ctr[:])
			lo++
			if lo == 0 {
				hi++
			}
		}
		subtle.XORBytes(buf[:n], buf[:n], sc.ks[:n])
		buf = buf[n:]
	}
}

func (s *sivAEAD) getScratch() *sivScratch {
	if s.mac == nil {
		panic("cryptocore: AES-SIV used after Wipe")
	}
	return s.scratch.Get().(*sivScratch)
}

func (s *sivAEAD) putScratch(sc *sivScratch) {
	*sc = sivScratch{} // no keystream or MAC state left lying around
	s.scratch.Put(sc)
}

// Seal appends SIV ‖ C to dst. Any overlap of dst's spare capacity with
// plaintext is allowed (the synthetic IV is computed before anything is
// written). Panics if the nonce is not 16 bytes.
func (s *sivAEAD) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != 16 {
		panic("cryptocore: AES-SIV nonce must be 16 bytes")
	}
	ret := slices.Grow(dst, 16+len(plaintext))[:len(dst)+16+len(plaintext)]
	out := ret[len(dst):]
	sc := s.getScratch()
	s.s2v(sc, ad, nonce, plaintext)
	copy(out[16:], plaintext) // memmove: fine if they overlap
	s.ctrXOR(sc, out[16:])
	copy(out[:16], sc.v[:])
	s.putScratch(sc)
	return ret
}

// Open verifies SIV ‖ C and appends the plaintext to dst. On failure it
// returns ErrSIVAuth and zeroes the output space. ciphertext may overlap
// dst's spare capacity (e.g. dst = ciphertext[:0]).
func (s *sivAEAD) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != 16 {
		panic("cryptocore: AES-SIV nonce must be 16 bytes")
	}
	if len(ciphertext) < 16 {
		return nil, ErrSIVAuth
	}
	sc := s.getScratch()
	defer s.putScratch(sc)
	var tag [16]byte
	copy(tag[:], ciphertext[:16])
	ret := slices.Grow(dst, len(ciphertext)-16)[:len(dst)+len(ciphertext)-16]
	out := ret[len(dst):]
	copy(out, ciphertext[16:]) // memmove: fine if they overlap
	sc.v = tag
	s.ctrXOR(sc, out)
	s.s2v(sc, ad, nonce, out)
	if subtle.ConstantTimeCompare(sc.v[:], tag[:]) != 1 {
		clear(out)
		return nil, ErrSIVAuth
	}
	return ret, nil
}

// Wipe drops the key schedules (Go offers no way to clear them) and clears
// the CMAC constants. Using the AEAD afterwards panics.
func (s *sivAEAD) Wipe() {
	clear(s.k1[:])
	clear(s.k2[:])
	clear(s.d0[:])
	s.mac, s.ctr, s.ctrGCM = nil, nil, nil
	if s.ctrNonce != nil {
		*s.ctrNonce = gcmNonceTable{}
	}
}

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

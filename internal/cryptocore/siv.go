package cryptocore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"sync"
)

// ErrSIVAuth is returned by the AES-SIV Open when the synthetic IV does not
// match, i.e. the ciphertext, nonce or associated data was modified.
var ErrSIVAuth = errors.New("cipher: message authentication failed")

// sivAEAD is RFC 5297 AES-SIV adapted to cipher.AEAD the way gocryptfs uses
// it (FORMAT.md 5): the S2V vector is [ad, nonce, plaintext] and the output
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
	ret, out := sliceForAppend(dst, 16+len(plaintext))
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
	ret, out := sliceForAppend(dst, len(ciphertext)-16)
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

// sliceForAppend extends in by n bytes, reusing its capacity when possible.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}

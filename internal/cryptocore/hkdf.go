package cryptocore

import (
	"encoding/binary"
	"math/bits"
)

// HKDF-SHA256 (RFC 5869) with every intermediate value in memory that is
// wiped afterwards. The standard library's HMAC and SHA-256 keep the last
// partial input block inside hash objects that cannot be cleared, and with
// HKDF's extract step that block is the master key itself: every
// derivation used to leave a copy of the master key behind in dead heap
// memory. Here the key is extracted once per master key (extract), each
// subkey is expanded from the pseudorandom key (expand), and all buffers
// are overwritten before they are released.

// prk is the HKDF pseudorandom key: the output of the extract step.
type prk [32]byte

// extract returns HMAC-SHA256(salt = 32 zero bytes, ikm), the HKDF
// extract step with an empty salt (RFC 5869: an empty salt means HashLen
// zero bytes). The caller wipes the result.
func extract(ikm []byte) *prk {
	var zeroSalt [32]byte
	out := new(prk)
	m := newHMACState()
	m.init(zeroSalt[:])
	m.write(ikm)
	m.sum(out)
	m.wipe()
	return out
}

// expand returns n bytes of HKDF-Expand(p, info). n must be at most
// 255*32.
func (p *prk) expand(info string, n int) []byte {
	if n > 255*sha256Size {
		// RFC 5869's limit; no caller asks for more than 64 bytes.
		panic("cryptocore: HKDF output too long")
	}
	out := make([]byte, 0, n+sha256Size)
	var t [sha256Size]byte
	m := newHMACState()
	for i := byte(1); len(out) < n; i++ {
		m.init(p[:])
		if i > 1 {
			m.write(t[:])
		}
		m.write([]byte(info)) // not secret: the copy may linger
		m.write([]byte{i})
		m.sum((*prk)(&t))
		out = append(out, t[:]...)
	}
	m.wipe()
	clear(t[:])
	clear(out[n:cap(out)])
	return out[:n]
}

func (p *prk) wipe() { clear(p[:]) }

const (
	sha256Size  = 32
	sha256Block = 64
)

// newHMACState allocates HMAC state on the heap, where the garbage
// collector never moves it. On the stack, a stack growth while it holds
// key material would copy it and free the old copy without clearing it.
//
//go:noinline
func newHMACState() *hmacSHA256 { return new(hmacSHA256) }

// hmacSHA256 is HMAC-SHA256 for keys of at most one block (all that HKDF
// with SHA-256 and a 32-byte PRK or salt needs).
type hmacSHA256 struct {
	opad [sha256Block]byte
	h    sha256State
}

func (m *hmacSHA256) init(key []byte) {
	if len(key) > sha256Block {
		panic("cryptocore: HMAC key longer than one block")
	}
	var ipad [sha256Block]byte
	copy(ipad[:], key)
	m.opad = [sha256Block]byte{}
	copy(m.opad[:], key)
	for i := range ipad {
		ipad[i] ^= 0x36
		m.opad[i] ^= 0x5c
	}
	m.h.reset()
	m.h.write(ipad[:])
	clear(ipad[:])
}

func (m *hmacSHA256) write(p []byte) { m.h.write(p) }

func (m *hmacSHA256) sum(out *prk) {
	var inner [sha256Size]byte
	m.h.sum(&inner)
	m.h.reset()
	m.h.write(m.opad[:])
	m.h.write(inner[:])
	m.h.sum((*[sha256Size]byte)(out))
	clear(inner[:])
}

func (m *hmacSHA256) wipe() {
	clear(m.opad[:])
	m.h.wipe()
}

// sha256State is SHA-256 (FIPS 180-4) whose whole state, message schedule
// included, lives in this struct so that wipe can clear it.
type sha256State struct {
	h   [8]uint32
	buf [sha256Block]byte
	n   int    // bytes in buf
	len uint64 // total message length in bytes
	w   [64]uint32
}

var sha256IV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

func (s *sha256State) reset() {
	s.h = sha256IV
	s.n = 0
	s.len = 0
}

func (s *sha256State) write(p []byte) {
	s.len += uint64(len(p))
	for len(p) > 0 {
		k := copy(s.buf[s.n:], p)
		s.n += k
		p = p[k:]
		if s.n == sha256Block {
			s.block()
			s.n = 0
		}
	}
}

// sum pads the message and writes the digest to out. The state must be
// reset before it is used again.
func (s *sha256State) sum(out *[sha256Size]byte) {
	bitLen := s.len * 8
	s.buf[s.n] = 0x80
	s.n++
	if s.n > sha256Block-8 {
		clear(s.buf[s.n:])
		s.block()
		s.n = 0
	}
	clear(s.buf[s.n : sha256Block-8])
	binary.BigEndian.PutUint64(s.buf[sha256Block-8:], bitLen)
	s.block()
	s.n = 0
	for i, v := range s.h {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
}

// block runs the compression function over s.buf.
func (s *sha256State) block() {
	w := &s.w
	for i := range 16 {
		w[i] = binary.BigEndian.Uint32(s.buf[4*i:])
	}
	for i := 16; i < 64; i++ {
		v1, v2 := w[i-2], w[i-15]
		s1 := bits.RotateLeft32(v1, -17) ^ bits.RotateLeft32(v1, -19) ^ v1>>10
		s0 := bits.RotateLeft32(v2, -7) ^ bits.RotateLeft32(v2, -18) ^ v2>>3
		w[i] = s1 + w[i-7] + s0 + w[i-16]
	}
	a, b, c, d, e, f, g, h := s.h[0], s.h[1], s.h[2], s.h[3], s.h[4], s.h[5], s.h[6], s.h[7]
	for i := range 64 {
		t1 := h + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
			(e&f ^ ^e&g) + sha256K[i] + w[i]
		t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
			(a&b ^ a&c ^ b&c)
		h, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	s.h[0] += a
	s.h[1] += b
	s.h[2] += c
	s.h[3] += d
	s.h[4] += e
	s.h[5] += f
	s.h[6] += g
	s.h[7] += h
}

func (s *sha256State) wipe() {
	*s = sha256State{}
}

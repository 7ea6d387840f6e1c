//go:build !without_openssl && cgo

package stupidgcm

/*
#cgo LDFLAGS: -lcrypto
#include "stupidgcm.h"
*/
import "C"

import (
	"crypto/cipher"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Available reports whether the OpenSSL backends are compiled in.
const Available = true

// Largest plaintexts accepted, as in Go's implementations: GCM's 32-bit
// block counter, and ChaCha20's 32-bit block counter starting at 1.
const (
	maxGCMPlaintext    = ((1 << 32) - 2) * 16
	maxChaChaPlaintext = ((1 << 32) - 1) * 64
)

// algID selects the cipher on the C side.
type algID C.int

const (
	algAESGCM  algID = C.STUPID_AES256GCM
	algChaCha  algID = C.STUPID_CHACHA20POLY1305
	algXChaCha algID = C.STUPID_XCHACHA20POLY1305
)

// ctxSlot holds one OpenSSL cipher context (a C pointer, which Go memory
// may hold). The C side creates the context on first use, so taking a slot
// never needs a second cgo call.
type ctxSlot struct {
	ctx C.uintptr_t
}

// state is everything the C side needs; it is separate from AEAD so that a
// cleanup attached to the AEAD can free the contexts.
type state struct {
	key     [KeySize]byte
	cipher  C.uintptr_t // fetched EVP_CIPHER
	perCall bool        // create and free a context per call (benchmarks)

	mu    sync.Mutex
	free  []*ctxSlot
	wiped bool
}

// get takes a slot from the pool, or a fresh empty one. It returns nil in
// per-call mode, which tells the C side to use a throw-away context.
func (s *state) get() *ctxSlot {
	if s.perCall {
		return nil
	}
	s.mu.Lock()
	if s.wiped {
		s.mu.Unlock()
		panic("stupidgcm: AEAD used after Wipe")
	}
	var sl *ctxSlot
	if n := len(s.free); n > 0 {
		sl = s.free[n-1]
		s.free = s.free[:n-1]
	}
	s.mu.Unlock()
	if sl == nil {
		// Allocated once per concurrently used context, not per call.
		sl = new(ctxSlot)
	}
	return sl
}

func (s *state) put(sl *ctxSlot) {
	if sl == nil {
		return
	}
	s.mu.Lock()
	if !s.wiped {
		s.free = append(s.free, sl)
		sl = nil
	}
	s.mu.Unlock()
	if sl != nil && sl.ctx != 0 {
		C.stupid_ctx_free(sl.ctx)
	}
}

// slotPtr is the argument for the C side: nil for per-call mode.
func slotPtr(sl *ctxSlot) *C.uintptr_t {
	if sl == nil {
		return nil
	}
	return &sl.ctx
}

// wipe frees all pooled contexts (OpenSSL wipes their key schedules) and
// clears the key. Idempotent.
func (s *state) wipe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wiped {
		return
	}
	s.wiped = true
	for _, sl := range s.free {
		if sl.ctx != 0 {
			C.stupid_ctx_free(sl.ctx)
		}
	}
	s.free = nil
	C.stupid_cipher_free(s.cipher)
	s.cipher = 0
	clear(s.key[:])
}

// AEAD is an OpenSSL-backed cipher.AEAD that also implements
// cryptocore.BatchAEAD (SealBatch and OpenBatch). It is safe for
// concurrent use.
type AEAD struct {
	alg       C.int
	nonceSize int
	maxPlain  uint64
	st        *state
}

var _ batchAEAD = (*AEAD)(nil)

func newAEAD(id algID, key []byte, perCall bool) (*AEAD, error) {
	alg := C.int(id)
	if len(key) != KeySize {
		return nil, fmt.Errorf("stupidgcm: key must be %d bytes, got %d", KeySize, len(key))
	}
	a := &AEAD{alg: alg, st: &state{perCall: perCall}}
	switch alg {
	case C.STUPID_AES256GCM:
		a.nonceSize, a.maxPlain = NonceSizeAESGCM, maxGCMPlaintext
	case C.STUPID_CHACHA20POLY1305:
		a.nonceSize, a.maxPlain = NonceSizeChaCha, maxChaChaPlaintext
	case C.STUPID_XCHACHA20POLY1305:
		a.nonceSize, a.maxPlain = NonceSizeXChaCha, maxChaChaPlaintext
	}
	copy(a.st.key[:], key)
	a.st.cipher = C.stupid_fetch(alg)
	if a.st.cipher == 0 {
		return nil, fmt.Errorf("stupidgcm: OpenSSL has no cipher %d", int(alg))
	}
	// Contexts live in C memory; free them if the AEAD is dropped unwiped.
	runtime.AddCleanup(a, (*state).wipe, a.st)
	return a, nil
}

// NewAESGCM returns AES-256-GCM with 16-byte nonces and 16-byte tags. key
// must be 32 bytes.
func NewAESGCM(key []byte) (cipher.AEAD, error) {
	return newAEAD(algAESGCM, key, false)
}

// NewChaCha20Poly1305 returns ChaCha20-Poly1305 (RFC 8439, 12-byte nonces).
// key must be 32 bytes.
func NewChaCha20Poly1305(key []byte) (cipher.AEAD, error) {
	return newAEAD(algChaCha, key, false)
}

// NewXChaCha20Poly1305 returns XChaCha20-Poly1305 (24-byte nonces): the
// subkey HChaCha20(key, nonce[:16]) drives ChaCha20-Poly1305 with nonce
// 00000000 ‖ nonce[16:24], as golang.org/x/crypto/chacha20poly1305.NewX.
// key must be 32 bytes.
func NewXChaCha20Poly1305(key []byte) (cipher.AEAD, error) {
	return newAEAD(algXChaCha, key, false)
}

// NonceSize returns 16 (AES-GCM), 12 (ChaCha20) or 24 (XChaCha20).
func (a *AEAD) NonceSize() int { return a.nonceSize }

// Overhead returns the tag size, 16.
func (a *AEAD) Overhead() int { return TagSize }

// Wipe frees the OpenSSL contexts (which clears the expanded keys) and
// zeroes the key. It must not run concurrently with other methods; using
// the AEAD afterwards panics.
func (a *AEAD) Wipe() { a.st.wipe() }

// cbytes converts a slice to a C pointer without a cgo pointer check (the
// element type holds no pointers); nil for a nil slice.
func cbytes(b []byte) *C.uint8_t {
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b)))
}

// Seal encrypts and authenticates plaintext, authenticates ad, and appends
// ciphertext ‖ tag to dst. plaintext and dst may alias exactly
// (dst == plaintext[:0]). Panics on a wrong nonce length or an oversized
// plaintext, like Go's AEADs.
func (a *AEAD) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != a.nonceSize {
		panic("stupidgcm: incorrect nonce length given to Seal")
	}
	if uint64(len(plaintext)) > a.maxPlain {
		panic("stupidgcm: message too large for Seal")
	}
	ret := slices.Grow(dst, len(plaintext)+TagSize)[:len(dst)+len(plaintext)+TagSize]
	out := ret[len(dst):]
	if inexactOverlap(out, plaintext) {
		panic("stupidgcm: invalid buffer overlap")
	}
	st := a.st
	sl := st.get()
	rc := C.stupid_seal(slotPtr(sl), st.cipher, a.alg, cbytes(st.key[:]), cbytes(nonce),
		cbytes(plaintext), C.size_t(len(plaintext)), cbytes(ad), C.size_t(len(ad)), cbytes(out))
	st.put(sl)
	runtime.KeepAlive(a)
	if rc != C.STUPID_OK {
		// Only an internal OpenSSL failure (out of memory) gets here; a
		// Seal that cannot encrypt must not return unencrypted data.
		panic("stupidgcm: OpenSSL encryption failed")
	}
	return ret
}

// Open authenticates and decrypts ciphertext ‖ tag and appends the
// plaintext to dst. On failure it returns ErrAuth and leaves zeros, not
// plaintext, in dst's spare capacity. ciphertext and dst may alias exactly.
func (a *AEAD) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != a.nonceSize {
		panic("stupidgcm: incorrect nonce length given to Open")
	}
	if len(ciphertext) < TagSize || uint64(len(ciphertext)-TagSize) > a.maxPlain {
		return nil, ErrAuth
	}
	n := len(ciphertext) - TagSize
	ret := slices.Grow(dst, n)[:len(dst)+n]
	out := ret[len(dst):]
	if inexactOverlap(out, ciphertext) {
		panic("stupidgcm: invalid buffer overlap")
	}
	st := a.st
	sl := st.get()
	rc := C.stupid_open(slotPtr(sl), st.cipher, a.alg, cbytes(st.key[:]), cbytes(nonce),
		cbytes(ciphertext), C.size_t(n), cbytes(ciphertext[n:]), cbytes(ad), C.size_t(len(ad)), cbytes(out))
	st.put(sl)
	runtime.KeepAlive(a)
	switch rc {
	case C.STUPID_OK:
		return ret, nil
	case C.STUPID_AUTH:
		return nil, ErrAuth
	}
	return nil, fmt.Errorf("stupidgcm: OpenSSL decryption failed")
}

// SealBatch implements cryptocore.BatchAEAD in one cgo call.
func (a *AEAD) SealBatch(dst, nonces, plaintext []byte, blockSize int, firstBlock uint64, fileID []byte) []byte {
	if uint64(blockSize) > a.maxPlain {
		panic("stupidgcm: block size too large")
	}
	ret, out, _, _ := prepSealBatch(a.nonceSize, TagSize, dst, nonces, plaintext, blockSize, fileID)
	st := a.st
	sl := st.get()
	rc := C.stupid_seal_batch(slotPtr(sl), st.cipher, a.alg, cbytes(st.key[:]),
		cbytes(nonces), C.size_t(a.nonceSize), cbytes(plaintext), C.size_t(len(plaintext)),
		C.size_t(blockSize), C.uint64_t(firstBlock), cbytes(fileID), C.size_t(len(fileID)), cbytes(out))
	st.put(sl)
	runtime.KeepAlive(a)
	if rc != C.STUPID_BATCH_OK {
		panic("stupidgcm: OpenSSL encryption failed")
	}
	return ret
}

// OpenBatch implements cryptocore.BatchAEAD in one cgo call.
func (a *AEAD) OpenBatch(dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error) {
	if uint64(blockSize) > a.maxPlain {
		panic("stupidgcm: block size too large")
	}
	ret, out, full, short, _ := prepOpenBatch(a.nonceSize, TagSize, dst, ciphertext, blockSize, fileID)
	cbs := a.nonceSize + blockSize + TagSize
	in := ciphertext[:min(len(ciphertext), full*cbs)]
	st := a.st
	sl := st.get()
	rc := C.stupid_open_batch(slotPtr(sl), st.cipher, a.alg, cbytes(st.key[:]),
		C.size_t(a.nonceSize), cbytes(in), C.size_t(len(in)), C.size_t(blockSize),
		C.uint64_t(firstBlock), cbytes(fileID), C.size_t(len(fileID)), cbytes(out))
	st.put(sl)
	runtime.KeepAlive(a)
	switch {
	case rc == C.STUPID_BATCH_ERR:
		return ret[:len(dst)], fmt.Errorf("stupidgcm: OpenSSL decryption failed")
	case rc >= 0:
		i := int(rc)
		return ret[:len(dst)+i*blockSize], &BlockError{Index: i, Block: firstBlock + uint64(i), Err: ErrAuth}
	case short:
		return ret[:len(dst)+full*blockSize], &BlockError{Index: full, Block: firstBlock + uint64(full), Err: ErrAuth}
	}
	return ret, nil
}

// hchacha20C exposes the C HChaCha20 to the tests, which cannot use cgo.
func hchacha20C(out, key, nonce []byte) {
	C.stupid_hchacha20(cbytes(out[:32]), cbytes(key[:32]), cbytes(nonce[:16]))
}

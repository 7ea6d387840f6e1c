// Package stupidgcm provides OpenSSL (libcrypto, through cgo)
// implementations of AES-256-GCM with 16-byte nonces, ChaCha20-Poly1305 and
// XChaCha20-Poly1305 behind Go's cipher.AEAD interface, whose AEADs also
// seal or open many consecutive gocryptfs content blocks in one call
// (SealBatch and OpenBatch, the contract cryptocore.BatchAEAD states).
//
// Every Seal and Open is a single cgo call into a C function that performs
// all EVP steps; OpenSSL contexts are keyed once and pooled, so the hot path
// does not allocate. The AEADs are safe for concurrent use.
//
// Built with the tag without_openssl, or with CGO_ENABLED=0, the package
// compiles without cgo; Available is then false and every constructor
// returns ErrNotCompiled. The batch helpers SealBatch and OpenBatch work in
// both builds and with any cipher.AEAD.
//
// Callers outside the crypto layer ask cryptocore (Backend.Available,
// BatchAEAD) rather than this package.
package stupidgcm

import "errors"

// ErrNotCompiled is returned by the constructors in a build without OpenSSL.
var ErrNotCompiled = errors.New("this binary was built without OpenSSL support")

// ErrAuth is returned by Open and OpenBatch when a ciphertext fails
// authentication (or is too short to carry a tag). It has the same text as
// the error of Go's own AEADs.
var ErrAuth = errors.New("cipher: message authentication failed")

// KeySize is the key length of every cipher in this package.
const KeySize = 32

// TagSize is the authentication tag length of every cipher in this package.
const TagSize = 16

// Nonce sizes of the three ciphers.
const (
	NonceSizeAESGCM  = 16
	NonceSizeChaCha  = 12
	NonceSizeXChaCha = 24
)

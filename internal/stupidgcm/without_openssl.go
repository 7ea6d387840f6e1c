//go:build without_openssl || !cgo

package stupidgcm

import "crypto/cipher"

// Available reports whether the OpenSSL backends are compiled in.
const Available = false

// NewAESGCM is unavailable in this build: it returns ErrNotCompiled.
func NewAESGCM(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

// NewChaCha20Poly1305 is unavailable in this build: it returns
// ErrNotCompiled.
func NewChaCha20Poly1305(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

// NewXChaCha20Poly1305 is unavailable in this build: it returns
// ErrNotCompiled.
func NewXChaCha20Poly1305(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

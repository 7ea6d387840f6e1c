//go:build !without_openssl && cgo

package stupidgcm

import "crypto/cipher"

// Available reports whether the OpenSSL backends are compiled in.
const Available = true

// NewAESGCM is a placeholder until the cgo backend lands.
func NewAESGCM(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

// NewChaCha20Poly1305 is a placeholder until the cgo backend lands.
func NewChaCha20Poly1305(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

// NewXChaCha20Poly1305 is a placeholder until the cgo backend lands.
func NewXChaCha20Poly1305(key []byte) (cipher.AEAD, error) { return nil, ErrNotCompiled }

// Package stupidgcm provides OpenSSL (libcrypto, through cgo) implementations
// of AES-256-GCM with 16-byte nonces, ChaCha20-Poly1305 and
// XChaCha20-Poly1305 behind Go's cipher.AEAD interface.
//
// Built with the tag without_openssl, or with CGO_ENABLED=0, the package
// compiles without cgo; Available is then false and every constructor returns
// ErrNotCompiled.
package stupidgcm

import "errors"

// ErrNotCompiled is returned by the constructors in a build without OpenSSL.
var ErrNotCompiled = errors.New("this binary was built without OpenSSL support")

// Package cryptocore turns a gocryptfs master key into the ciphers that the
// rest of the filesystem uses: the EME name cipher and the content AEAD
// (AES-256-GCM with 16-byte nonces, AES-SIV-512 or XChaCha20-Poly1305), with
// subkeys derived as in docs/format.md section 3.
//
// It is also where the layers above learn what the crypto layer offers:
// which AEAD backends this binary has (Backend.Available, AutoBackend),
// and the contracts of content AEADs beyond cipher.AEAD (BatchAEAD and
// its BatchError), which package stupidgcm's OpenSSL AEADs satisfy. Above
// cryptocore, nothing needs to import stupidgcm.
//
// The package holds no global state; every CryptoCore is independent and
// safe for concurrent use.
package cryptocore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha512"
	"errors"
	"fmt"
	"runtime"

	"github.com/rfjakob/eme"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/sys/cpu"

	"gocryptfs/internal/stupidgcm"
)

// KeyLen is the length of the master key and of every 256-bit subkey.
const KeyLen = 32

// TagLen is the authentication tag length of every content cipher.
const TagLen = 16

// HKDF info strings (docs/format.md section 3). They are part of the on-disk
// format: changing one byte makes every existing filesystem unreadable.
const (
	InfoEME     = "EME filename encryption"
	InfoGCM     = "AES-GCM file content encryption"
	InfoSIV     = "AES-SIV file content encryption"
	InfoXChaCha = "XChaCha20-Poly1305 file content encryption"
)

// ContentCipher selects the AEAD used for file contents, symlink targets and
// xattr values.
type ContentCipher int

const (
	// AESGCM is AES-256-GCM with 16-byte nonces (the default).
	AESGCM ContentCipher = iota
	// AESSIV is AES-SIV-512 (RFC 5297), mandatory in reverse mode.
	AESSIV
	// XChaCha20Poly1305 is XChaCha20-Poly1305 with 24-byte nonces.
	XChaCha20Poly1305
)

// String returns the name used by -info and gocryptfs-xray.
func (c ContentCipher) String() string {
	switch c {
	case AESGCM:
		return "AES-GCM-256"
	case AESSIV:
		return "AES-SIV-512"
	case XChaCha20Poly1305:
		return "XChaCha20-Poly1305"
	}
	return fmt.Sprintf("ContentCipher(%d)", int(c))
}

// NonceSize is the per-block nonce length stored on disk for this cipher.
func (c ContentCipher) NonceSize() int {
	if c == XChaCha20Poly1305 {
		return chacha20poly1305.NonceSizeX
	}
	return 16
}

// Backend selects who implements the content AEAD.
type Backend int

const (
	// BackendAuto picks the faster backend for this CPU (see AutoBackend).
	BackendAuto Backend = iota
	// BackendGo uses Go's standard library / x/crypto (assembly where available).
	BackendGo
	// BackendOpenSSL uses libcrypto through cgo (package stupidgcm).
	BackendOpenSSL
)

// String returns a short name for logs.
func (b Backend) String() string {
	switch b {
	case BackendAuto:
		return "auto"
	case BackendGo:
		return "Go"
	case BackendOpenSSL:
		return "OpenSSL"
	}
	return fmt.Sprintf("Backend(%d)", int(b))
}

// Available reports whether backend b is compiled into this binary:
// BackendGo always is, and so BackendAuto, which falls back to it;
// BackendOpenSSL only in a cgo build without the tag without_openssl.
func (b Backend) Available() bool {
	switch b {
	case BackendAuto, BackendGo:
		return true
	case BackendOpenSSL:
		return stupidgcm.Available
	}
	return false
}

// HasAESGCMHardware reports whether the CPU has AES and carry-less multiply
// instructions, which make Go's assembly AES-GCM the fastest choice.
func HasAESGCMHardware() bool {
	switch {
	case cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ:
		return true
	case cpu.ARM64.HasAES && cpu.ARM64.HasPMULL:
		return true
	}
	return false
}

// AutoBackend resolves BackendAuto for cipher c: the backend that costs
// the least CPU time per byte on this CPU. Without OpenSSL in the build, and
// for AES-SIV (Go only), it is always BackendGo.
//
// AES-GCM: Go's assembly wins wherever the CPU has AES and carry-less
// multiply instructions (HasAESGCMHardware); without them Go falls back to
// slow constant-time code and OpenSSL is preferred.
//
// XChaCha20-Poly1305: OpenSSL on amd64 CPUs with AVX-512F, Go everywhere
// else. Measured on the project's machine kind (AMD "Turin", OpenSSL
// 3.0), 1 MiB requests through contentenc, the implementations
// interleaved and each charged with its own CPU time (contentenc's
// BenchmarkBackendsPaired, medians of 10 runs), OpenSSL/Go throughput per
// CPU second is 1.27 (encrypt) and 1.36 (decrypt) sequentially, 1.25 and
// 1.23 on the parallel path, with one batch call per worker; 1.16 and
// 1.18 with one cgo call per block. With OpenSSL's AVX-512 code masked
// off (OPENSSL_ia32cap=":~0x10000", leaving its AVX2 code, as on CPUs
// without AVX-512) the sequential ratios drop to 0.91 and 0.85, and Go's
// AVX2 assembly (ChaCha20 and Poly1305 in one pass) wins; masking only
// AVX512IFMA or AVX512VL keeps OpenSSL ahead, so AVX512F is the feature
// that decides. (The reference's -speed figures, Go ahead on this machine
// kind, come from a different OpenSSL binding; this one does a whole Seal,
// Open or batch in one cgo call.) Other architectures are unmeasured and
// keep Go, which needs no cgo call; on arm64, where Go has no Poly1305
// assembly, OpenSSL may well be faster: gocryptfs -speed there tells.
func AutoBackend(c ContentCipher) Backend {
	if !BackendOpenSSL.Available() {
		return BackendGo
	}
	switch c {
	case AESGCM:
		if !HasAESGCMHardware() {
			return BackendOpenSSL
		}
	case XChaCha20Poly1305:
		if runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F {
			return BackendOpenSSL
		}
	}
	return BackendGo
}

// HKDF derives n bytes from ikm with HKDF-SHA256, an empty salt and the given
// info string. n must be at most 255*32. No copy of ikm is left in memory
// (see hkdf.go).
func HKDF(ikm []byte, info string, n int) []byte {
	p := extract(ikm)
	defer p.wipe()
	return p.expand(info, n)
}

// ErrBadKeyLen is returned when a master key is not KeyLen bytes long.
var ErrBadKeyLen = errors.New("master key must be 32 bytes")

// deriver derives the subkeys of one master key: with HKDF the master key
// goes through the extract step once, and every subkey is expanded from
// the result; without HKDF (legacy filesystems) the subkeys are computed
// from the master key directly. The caller wipes it.
type deriver struct {
	masterKey []byte // only without HKDF
	prk       *prk   // only with HKDF
}

func newDeriver(masterKey []byte, useHKDF bool) (*deriver, error) {
	if len(masterKey) != KeyLen {
		return nil, ErrBadKeyLen
	}
	if useHKDF {
		return &deriver{prk: extract(masterKey)}, nil
	}
	return &deriver{masterKey: masterKey}, nil
}

func (d *deriver) wipe() {
	if d.prk != nil {
		d.prk.wipe()
	}
}

// contentKey derives the content-cipher key. Without HKDF the master key
// itself is used for AES-GCM and SHA-512 of it for AES-SIV;
// XChaCha20-Poly1305 requires HKDF.
func (d *deriver) contentKey(c ContentCipher) ([]byte, error) {
	useHKDF := d.prk != nil
	switch c {
	case AESGCM:
		if useHKDF {
			return d.prk.expand(InfoGCM, KeyLen), nil
		}
		return append([]byte(nil), d.masterKey...), nil
	case AESSIV:
		if useHKDF {
			return d.prk.expand(InfoSIV, 64), nil
		}
		h := sha512.Sum512(d.masterKey)
		return h[:], nil
	case XChaCha20Poly1305:
		if !useHKDF {
			return nil, errors.New("XChaCha20-Poly1305 requires HKDF")
		}
		return d.prk.expand(InfoXChaCha, KeyLen), nil
	}
	return nil, fmt.Errorf("unknown content cipher %d", int(c))
}

// nameKey derives the EME key (also used for xattr names).
func (d *deriver) nameKey() []byte {
	if d.prk != nil {
		return d.prk.expand(InfoEME, KeyLen)
	}
	return append([]byte(nil), d.masterKey...)
}

// NewAEAD constructs the content AEAD for cipher c from an already derived
// key, using backend b (BackendAuto is resolved with AutoBackend). The
// returned AEAD's NonceSize() equals c.NonceSize().
func NewAEAD(c ContentCipher, b Backend, key []byte) (cipher.AEAD, Backend, error) {
	if b == BackendAuto {
		b = AutoBackend(c)
	}
	switch c {
	case AESGCM:
		if b == BackendOpenSSL {
			a, err := stupidgcm.NewAESGCM(key)
			return a, b, err
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, b, fmt.Errorf("AES-GCM: %w", err)
		}
		a, err := cipher.NewGCMWithNonceSize(block, 16)
		return a, b, err
	case AESSIV:
		if b == BackendOpenSSL {
			return nil, b, errors.New("AES-SIV has no OpenSSL backend")
		}
		a, err := NewAESSIV(key)
		return a, b, err
	case XChaCha20Poly1305:
		if b == BackendOpenSSL {
			a, err := stupidgcm.NewXChaCha20Poly1305(key)
			return a, b, err
		}
		a, err := chacha20poly1305.NewX(key)
		return a, b, err
	}
	return nil, b, fmt.Errorf("unknown content cipher %d", int(c))
}

// Options configures New.
type Options struct {
	// Cipher is the content cipher.
	Cipher ContentCipher
	// Backend is the AEAD implementation; BackendAuto picks one.
	Backend Backend
	// HKDF derives subkeys with HKDF (all filesystems since v1.3).
	HKDF bool
}

// CryptoCore bundles the ciphers derived from one master key.
type CryptoCore struct {
	// Cipher is the content cipher.
	Cipher ContentCipher
	// Backend is the backend actually in use (never BackendAuto).
	Backend Backend
	// AEAD encrypts file contents, symlink targets and xattr values.
	AEAD cipher.AEAD
	// EME encrypts file and xattr names.
	EME *eme.EMECipher
	// Nonces supplies random nonces for AEAD.
	Nonces *NonceSource

	contentKey []byte
	nameKey    []byte
}

// New derives the subkeys from masterKey and builds the ciphers. The caller
// keeps ownership of masterKey and should wipe it when done; CryptoCore keeps
// its own copies of the subkeys, which Wipe clears.
func New(masterKey []byte, opts Options) (*CryptoCore, error) {
	d, err := newDeriver(masterKey, opts.HKDF)
	if err != nil {
		return nil, err
	}
	defer d.wipe()
	ck, err := d.contentKey(opts.Cipher)
	if err != nil {
		return nil, err
	}
	nk := d.nameKey()
	a, backend, err := NewAEAD(opts.Cipher, opts.Backend, ck)
	if err != nil {
		Wipe(ck)
		Wipe(nk)
		return nil, fmt.Errorf("content cipher %v (%v): %w", opts.Cipher, backend, err)
	}
	block, err := aes.NewCipher(nk)
	if err != nil {
		return nil, fmt.Errorf("EME cipher: %w", err)
	}
	return &CryptoCore{
		Cipher:     opts.Cipher,
		Backend:    backend,
		AEAD:       a,
		EME:        eme.New(block),
		Nonces:     NewNonceSource(),
		contentKey: ck,
		nameKey:    nk,
	}, nil
}

// Wipe overwrites the subkeys held by c. The ciphers inside keep their own
// expanded key schedules, which Go gives no way to clear; dropping all
// references to c lets them be collected.
func (c *CryptoCore) Wipe() {
	Wipe(c.contentKey)
	Wipe(c.nameKey)
	if w, ok := c.AEAD.(interface{ Wipe() }); ok {
		w.Wipe()
	}
}

// Wipe overwrites b with zeros.
func Wipe(b []byte) {
	clear(b)
}

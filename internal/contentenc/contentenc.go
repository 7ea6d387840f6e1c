// Package contentenc implements the gocryptfs file-content format (docs/format.md
// section 4) as pure computation on byte slices: the 18-byte file header,
// the size mapping between plaintext and ciphertext files, block arithmetic
// for random access, and sealing/opening of 4096-byte blocks with the
// content AEAD of a cryptocore.CryptoCore. It does no I/O.
//
// A ciphertext file is header ‖ cblock_0 ‖ cblock_1 ‖ …, where cblock_i is
// nonce ‖ AEAD-Seal(plaintext block i, AAD = BE64(i) ‖ fileID). A ciphertext
// block that is exactly CipherBS() zero bytes is a hole and reads as 4096
// zero bytes.
//
// Forward mode draws a fresh random nonce for every block (EncryptBlock,
// EncryptBlocks). Reverse mode uses nonces derived from the path
// (EncryptBlocksDerived; EncryptBlockNonce for a single block).
//
// The hot-path functions append to caller-supplied buffers and do not
// allocate per block; GetPBuf/GetCBuf hand out request-sized buffers.
package contentenc

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"gocryptfs/internal/cryptocore"
)

// ErrCorruptBlock is wrapped by every error about a ciphertext block that
// does not decrypt: too short or too long, an all-zero nonce outside a
// hole, or failed authentication. Use errors.As with *CorruptBlockError to
// get the block number.
var ErrCorruptBlock = errors.New("corrupt block")

// ErrBadNonce is returned when a caller-supplied nonce or block-0 IV does
// not have the cipher's nonce length.
var ErrBadNonce = errors.New("bad nonce length")

// CorruptBlockError reports a block that failed to decrypt. Its message is
// "corrupt block #N: <reason>", as in the reference's logs; it matches
// ErrCorruptBlock with errors.Is and unwraps to the reason (for example the
// AEAD's authentication error).
type CorruptBlockError struct {
	// BlockNo is the number of the failing block within its file.
	BlockNo uint64
	// Err is the reason.
	Err error
}

func (e *CorruptBlockError) Error() string {
	return fmt.Sprintf("corrupt block #%d: %v", e.BlockNo, e.Err)
}

// Unwrap returns the reason.
func (e *CorruptBlockError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorruptBlock) true.
func (e *CorruptBlockError) Is(target error) bool { return target == ErrCorruptBlock }

func corrupt(blockNo uint64, format string, args ...any) error {
	return &CorruptBlockError{BlockNo: blockNo, Err: fmt.Errorf(format, args...)}
}

// Options configures New.
type Options struct {
	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
}

// ContentEnc seals and opens file-content blocks with the content AEAD of
// one CryptoCore. It is safe for concurrent use.
type ContentEnc struct {
	cc       *cryptocore.CryptoCore
	aead     cipher.AEAD
	nonceLen int
	tagLen   int
	overhead int // nonceLen + tagLen
	cipherBS int // DefaultBS + overhead
	log      *slog.Logger

	// scratch hands out AAD buffers. The AAD is passed to an interface
	// method (cipher.AEAD.Seal/Open), so a stack array would escape and
	// cost an allocation per block; a pooled one does not.
	scratch sync.Pool // *scratch
	pbufs   sync.Pool // *[]byte, cap pbufCap
	cbufs   sync.Pool // *[]byte, cap cbufCap
	pbufCap int
	cbufCap int

	// batchScratch hands out working memory for the batch paths (blocks.go).
	batchScratch sync.Pool // *batchScratch
}

// scratch is per-goroutine working memory for sealing/opening.
type scratch struct {
	aad [8 + FileIDLen]byte
}

// buildAAD returns BE64(blockNo) ‖ fileID in s (file IDs longer than
// FileIDLen, which the format never has, fall back to a fresh slice).
func (s *scratch) buildAAD(blockNo uint64, fileID []byte) []byte {
	return AAD(s.aad[:0], blockNo, fileID)
}

// AAD appends the associated data of a content block, BE64(blockNo) ‖
// fileID, to dst.
func AAD(dst []byte, blockNo uint64, fileID []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, blockNo)
	return append(dst, fileID...)
}

// New returns a ContentEnc using cc's content AEAD and nonce source. It
// fails if cc has no AEAD or the AEAD's nonce or tag size is not one the
// format knows.
func New(cc *cryptocore.CryptoCore, opts Options) (*ContentEnc, error) {
	if cc == nil || cc.AEAD == nil || cc.Nonces == nil {
		return nil, errors.New("contentenc: CryptoCore without content AEAD or nonce source")
	}
	nl, tl := cc.AEAD.NonceSize(), cc.AEAD.Overhead()
	if nl != cc.Cipher.NonceSize() || nl < 16 {
		return nil, fmt.Errorf("contentenc: %v AEAD has nonce size %d, want %d", cc.Cipher, nl, cc.Cipher.NonceSize())
	}
	if tl != cryptocore.TagLen {
		return nil, fmt.Errorf("contentenc: %v AEAD has tag size %d, want %d", cc.Cipher, tl, cryptocore.TagLen)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ce := &ContentEnc{
		cc:       cc,
		aead:     cc.AEAD,
		nonceLen: nl,
		tagLen:   tl,
		overhead: nl + tl,
		cipherBS: DefaultBS + nl + tl,
		log:      log,
	}
	ce.pbufCap = PoolBlocks * DefaultBS
	ce.cbufCap = HeaderLen + PoolBlocks*ce.cipherBS
	ce.scratch.New = func() any { return new(scratch) }
	ce.pbufs.New = func() any { b := make([]byte, 0, ce.pbufCap); return &b }
	ce.cbufs.New = func() any { b := make([]byte, 0, ce.cbufCap); return &b }
	log.Debug("content encryption ready", "cipher", cc.Cipher, "backend", cc.Backend,
		"cipherBS", ce.cipherBS)
	return ce, nil
}

// CipherBS returns the size of a full ciphertext block: 4128 for AES-GCM and
// AES-SIV, 4136 for XChaCha20-Poly1305.
func (ce *ContentEnc) CipherBS() int { return ce.cipherBS }

// BlockOverhead returns how many bytes a ciphertext block has more than its
// plaintext: nonce plus tag (32 or 40).
func (ce *ContentEnc) BlockOverhead() int { return ce.overhead }

// NonceSize returns the per-block nonce length (16, or 24 for XChaCha).
func (ce *ContentEnc) NonceSize() int { return ce.nonceLen }

// Cipher returns the content cipher in use.
func (ce *ContentEnc) Cipher() cryptocore.ContentCipher { return ce.cc.Cipher }

func (ce *ContentEnc) getScratch() *scratch  { return ce.scratch.Get().(*scratch) }
func (ce *ContentEnc) putScratch(s *scratch) { ce.scratch.Put(s) }

// EncryptBlock appends the ciphertext block for plaintext block blockNo of
// the file fileID to dst: a fresh random nonce followed by the AEAD output.
// plain should be 1..DefaultBS bytes (the format has no empty blocks) and
// must not overlap dst's spare capacity. With len(plain)+BlockOverhead()
// bytes of spare capacity in dst it does not allocate.
func (ce *ContentEnc) EncryptBlock(dst, plain []byte, blockNo uint64, fileID []byte) []byte {
	dst = slices.Grow(dst, len(plain)+ce.overhead)
	start := len(dst)
	dst = dst[:start+ce.nonceLen]
	ce.cc.Nonces.Fill(dst[start:])
	s := ce.getScratch()
	dst = ce.seal(dst, plain, blockNo, fileID, s)
	ce.putScratch(s)
	return dst
}

// EncryptBlockNonce is EncryptBlock with a caller-chosen nonce, for reverse
// mode, where nonces are derived from the path (docs/format.md 9.4). nonce must
// be NonceSize() bytes and must never be reused with other plaintext under a
// nondeterministic cipher; it must not be all zero either, or the block
// would be rejected on reading.
func (ce *ContentEnc) EncryptBlockNonce(dst, plain []byte, blockNo uint64, fileID, nonce []byte) ([]byte, error) {
	if len(nonce) != ce.nonceLen {
		return dst, fmt.Errorf("contentenc: nonce of %d bytes, want %d: %w", len(nonce), ce.nonceLen, ErrBadNonce)
	}
	dst = slices.Grow(dst, len(plain)+ce.overhead)
	dst = append(dst, nonce...)
	s := ce.getScratch()
	dst = ce.seal(dst, plain, blockNo, fileID, s)
	ce.putScratch(s)
	return dst, nil
}

// seal appends the AEAD output for plain to dst, whose last nonceLen bytes
// are the nonce. The nonce lies in dst's length, not its spare capacity, so
// the AEAD never overwrites it.
func (ce *ContentEnc) seal(dst, plain []byte, blockNo uint64, fileID []byte, s *scratch) []byte {
	nonce := dst[len(dst)-ce.nonceLen:]
	return ce.aead.Seal(dst, nonce, plain, s.buildAAD(blockNo, fileID))
}

// DecryptBlock opens one ciphertext block (at most CipherBS() bytes; the
// last block of a file may be shorter) and appends its plaintext to dst. A
// block of exactly CipherBS() zero bytes is a hole and yields DefaultBS zero
// bytes. An empty ciphertext yields nothing (end of file). Errors wrap
// ErrCorruptBlock (*CorruptBlockError, "corrupt block #N: …") and leave dst
// unchanged; no unauthenticated plaintext is ever returned. ciphertext must
// not overlap dst's spare capacity. With enough spare capacity in dst it
// does not allocate.
func (ce *ContentEnc) DecryptBlock(dst, ciphertext []byte, blockNo uint64, fileID []byte) ([]byte, error) {
	if len(ciphertext) == 0 {
		return dst, nil
	}
	s := ce.getScratch()
	out, err := ce.open(dst, ciphertext, blockNo, fileID, s)
	ce.putScratch(s)
	return out, err
}

// open is DecryptBlock for a non-empty block with a scratch already held.
func (ce *ContentEnc) open(dst, cblock []byte, blockNo uint64, fileID []byte, s *scratch) ([]byte, error) {
	if len(cblock) > ce.cipherBS {
		return dst, corrupt(blockNo, "block is %d bytes long, more than the block size %d", len(cblock), ce.cipherBS)
	}
	if len(cblock) < ce.nonceLen {
		return dst, corrupt(blockNo, "block is too short: %d bytes, nonce alone is %d", len(cblock), ce.nonceLen)
	}
	nonce := cblock[:ce.nonceLen]
	if allZero(nonce) {
		// Holes are only recognised after the cheap nonce test, so that
		// normal blocks are never scanned in full.
		if len(cblock) == ce.cipherBS && allZero(cblock[ce.nonceLen:]) {
			dst = slices.Grow(dst, DefaultBS)
			n := len(dst)
			dst = dst[:n+DefaultBS]
			clear(dst[n:])
			return dst, nil
		}
		return dst, corrupt(blockNo, "all-zero nonce")
	}
	if len(cblock) < ce.overhead {
		return dst, corrupt(blockNo, "block is too short: %d bytes, nonce and tag are %d", len(cblock), ce.overhead)
	}
	out, err := ce.aead.Open(dst, nonce, cblock[ce.nonceLen:], s.buildAAD(blockNo, fileID))
	if err != nil {
		return dst, &CorruptBlockError{BlockNo: blockNo, Err: err}
	}
	return out, nil
}

// deriveNonce writes the nonce of block blockNo into dst, which has
// len(block0IV) ≥ 16 bytes.
func deriveNonce(dst, block0IV []byte, blockNo uint64) {
	copy(dst, block0IV)
	binary.BigEndian.PutUint64(dst[8:16], binary.BigEndian.Uint64(block0IV[8:16])+blockNo)
}

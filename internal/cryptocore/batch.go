package cryptocore

import "crypto/cipher"

// BatchAEAD is implemented by content AEADs that can process many
// consecutive gocryptfs content blocks of one file in one call (the
// OpenSSL backend of package stupidgcm: one cgo call instead of one per
// block). Package contentenc looks for it with a type assertion and uses
// the per-block Seal and Open of every other cipher.AEAD; both paths give
// the same bytes and the same errors.
//
// The layout is that of docs/format.md 4.3 for AES-GCM and XChaCha20-Poly1305:
// plaintext is cut into blocks of blockSize bytes (only the last may be
// shorter), block i (numbered firstBlock+i in the file) is sealed with
// associated data BE64(firstBlock+i) ‖ fileID, and its ciphertext block is
// nonce ‖ ciphertext ‖ tag, NonceSize()+n+Overhead() bytes.
//
// Implementations are safe for concurrent use, like the AEADs of
// NewAEAD. (stupidgcm, which cryptocore builds on, cannot name this
// interface; its types satisfy it by their method sets.)
type BatchAEAD interface {
	cipher.AEAD

	// SealBatch appends the ciphertext blocks of plaintext to dst and
	// returns the extended slice. nonces holds one NonceSize() nonce per
	// block, in order (len(nonces) >= blocks*NonceSize()). plaintext may
	// be dst[len(dst):] exactly (in-place sealing, which needs capacity for
	// the expanded output); any other overlap of the output with plaintext,
	// nonces or fileID panics, as do a short nonces slice or blockSize <= 0.
	SealBatch(dst, nonces, plaintext []byte, blockSize int, firstBlock uint64, fileID []byte) []byte

	// OpenBatch decrypts the ciphertext blocks in ciphertext, appends the
	// plaintext to dst and returns the extended slice. If block i fails
	// authentication (or the last block is shorter than nonce plus tag),
	// it returns dst extended by the plaintext of blocks 0..i-1 only, and
	// an error that errors.As finds as a BatchError with BatchIndex i; the
	// output space of block i is zeroed. ciphertext may start exactly at
	// dst[len(dst):] (in-place opening); in that case the ciphertext of a
	// failing block is destroyed, later blocks stay intact.
	OpenBatch(dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error)
}

// BatchError is the error of BatchAEAD.OpenBatch for a block that fails to
// open: which block of the batch it was, and why (Unwrap; an
// authentication failure).
type BatchError interface {
	error
	// BatchIndex is the position of the failing block in the batch,
	// 0-based (not its number in the file).
	BatchIndex() int
	// Unwrap returns the cause.
	Unwrap() error
}

package stupidgcm

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// BatchAEAD is implemented by AEADs that can process many consecutive
// gocryptfs content blocks of one file in one call (for the OpenSSL
// backends: one cgo call instead of one per block).
//
// The layout is that of docs/format.md 4.3 for AES-GCM and XChaCha20-Poly1305:
// plaintext is cut into blocks of blockSize bytes (only the last may be
// shorter), block i (numbered firstBlock+i in the file) is sealed with
// associated data BE64(firstBlock+i) ‖ fileID, and its ciphertext block is
// nonce ‖ ciphertext ‖ tag, NonceSize()+n+Overhead() bytes.
//
// Package contentenc uses it through a type assertion; the functions
// SealBatch and OpenBatch below do that and fall back to a loop over Seal
// and Open for any other cipher.AEAD, with identical results.
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
	// it returns dst extended by the plaintext of blocks 0..i-1 only, and a
	// *BlockError; the output space of block i is zeroed. ciphertext may
	// start exactly at dst[len(dst):] (in-place opening); in that case the
	// ciphertext of a failing block is destroyed, later blocks stay intact.
	OpenBatch(dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error)
}

// BlockError reports which block of a batch failed to open.
type BlockError struct {
	// Index is the position of the block in the batch (0-based).
	Index int
	// Block is the block number in the file, firstBlock+Index.
	Block uint64
	// Err is the cause, ErrAuth.
	Err error
}

// Error names the failing block by its number in the file.
func (e *BlockError) Error() string {
	return fmt.Sprintf("block %d: %v", e.Block, e.Err)
}

// Unwrap returns Err, so errors.Is(err, ErrAuth) works.
func (e *BlockError) Unwrap() error { return e.Err }

// SealBatch seals plaintext as consecutive content blocks with a, using
// a's own SealBatch when it implements BatchAEAD and a loop over a.Seal
// otherwise. The contract is that of BatchAEAD.SealBatch.
func SealBatch(a cipher.AEAD, dst, nonces, plaintext []byte, blockSize int, firstBlock uint64, fileID []byte) []byte {
	if b, ok := a.(BatchAEAD); ok {
		return b.SealBatch(dst, nonces, plaintext, blockSize, firstBlock, fileID)
	}
	ns, ov := a.NonceSize(), a.Overhead()
	ret, out, nblocks, inPlace := prepSealBatch(ns, ov, dst, nonces, plaintext, blockSize, fileID)
	cbs := ns + blockSize + ov
	aad := make([]byte, 8, 8+len(fileID)) // once per batch, not per block
	aad = append(aad, fileID...)
	// Backwards, so that in-place use never overwrites unread input: output
	// block i starts at or after input block i.
	for i := nblocks - 1; i >= 0; i-- {
		n := min(blockSize, len(plaintext)-i*blockSize)
		blk := out[i*cbs : i*cbs+ns+n+ov]
		src := plaintext[i*blockSize : i*blockSize+n]
		if inPlace {
			// Go's AEADs need exact overlap for in-place sealing.
			copy(blk[ns:ns+n], src)
			src = blk[ns : ns+n]
		}
		copy(blk[:ns], nonces[i*ns:(i+1)*ns])
		binary.BigEndian.PutUint64(aad, firstBlock+uint64(i))
		a.Seal(blk[ns:ns], blk[:ns], src, aad)
	}
	return ret
}

// OpenBatch opens consecutive content blocks with a, using a's own
// OpenBatch when it implements BatchAEAD and a loop over a.Open otherwise.
// The contract is that of BatchAEAD.OpenBatch.
func OpenBatch(a cipher.AEAD, dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error) {
	if b, ok := a.(BatchAEAD); ok {
		return b.OpenBatch(dst, ciphertext, blockSize, firstBlock, fileID)
	}
	ns, ov := a.NonceSize(), a.Overhead()
	ret, out, full, short, inPlace := prepOpenBatch(ns, ov, dst, ciphertext, blockSize, fileID)
	cbs := ns + blockSize + ov
	// One allocation per batch for the AAD and a nonce copy.
	scratch := make([]byte, 8+len(fileID)+ns)
	aad, nonce := scratch[:8+len(fileID)], scratch[8+len(fileID):]
	copy(aad[8:], fileID)
	for i := 0; i < full; i++ {
		blk := ciphertext[i*cbs : min((i+1)*cbs, len(ciphertext))]
		n := len(blk) - ns - ov
		binary.BigEndian.PutUint64(aad, firstBlock+uint64(i))
		var err error
		if inPlace {
			// Output block i begins at i*blockSize of the same memory;
			// moving ciphertext‖tag there stays inside input block i and
			// below input block i+1.
			copy(nonce, blk[:ns])
			w := ciphertext[i*blockSize : i*blockSize+n+ov]
			copy(w, blk[ns:])
			_, err = a.Open(w[:0], nonce, w, aad)
		} else {
			_, err = a.Open(out[i*blockSize:i*blockSize], blk[:ns], blk[ns:], aad)
		}
		if err != nil {
			clear(out[i*blockSize : i*blockSize+n])
			return ret[:len(dst)+i*blockSize], &BlockError{Index: i, Block: firstBlock + uint64(i), Err: ErrAuth}
		}
	}
	if short {
		return ret[:len(dst)+full*blockSize], &BlockError{Index: full, Block: firstBlock + uint64(full), Err: ErrAuth}
	}
	return ret, nil
}

// prepSealBatch validates the arguments of a SealBatch call and makes room
// for the output. It panics on programmer errors, like Go's AEADs do.
func prepSealBatch(ns, ov int, dst, nonces, plaintext []byte, blockSize int, fileID []byte) (ret, out []byte, nblocks int, inPlace bool) {
	if blockSize <= 0 {
		panic("stupidgcm: SealBatch: block size must be positive")
	}
	nblocks = (len(plaintext) + blockSize - 1) / blockSize
	if len(nonces) < nblocks*ns {
		panic("stupidgcm: SealBatch: not enough nonces")
	}
	ret, out = sliceForAppend(dst, len(plaintext)+nblocks*(ns+ov))
	inPlace = len(plaintext) > 0 && &out[0] == &plaintext[0]
	if !inPlace && anyOverlap(out, plaintext) {
		panic("stupidgcm: SealBatch: invalid buffer overlap")
	}
	if anyOverlap(out, nonces) || anyOverlap(out, fileID) {
		panic("stupidgcm: SealBatch: output overlaps nonces or file ID")
	}
	return ret, out, nblocks, inPlace
}

// prepOpenBatch validates the arguments of an OpenBatch call and makes room
// for the output. full is the number of blocks to decrypt; short reports a
// trailing block too short to hold nonce and tag.
func prepOpenBatch(ns, ov int, dst, ciphertext []byte, blockSize int, fileID []byte) (ret, out []byte, full int, short, inPlace bool) {
	if blockSize <= 0 {
		panic("stupidgcm: OpenBatch: block size must be positive")
	}
	cbs := ns + blockSize + ov
	full = len(ciphertext) / cbs
	plainLen := full * blockSize
	if rest := len(ciphertext) % cbs; rest >= ns+ov {
		full++
		plainLen += rest - ns - ov
	} else if rest > 0 {
		short = true
	}
	ret, out = sliceForAppend(dst, plainLen)
	inPlace = len(out) > 0 && &out[0] == &ciphertext[0]
	if !inPlace && anyOverlap(out, ciphertext) {
		panic("stupidgcm: OpenBatch: invalid buffer overlap")
	}
	if anyOverlap(out, fileID) {
		panic("stupidgcm: OpenBatch: output overlaps file ID")
	}
	return ret, out, full, short, inPlace
}

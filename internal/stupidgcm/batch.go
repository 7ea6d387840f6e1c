package stupidgcm

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"slices"
)

// batchAEAD is the method set of cryptocore.BatchAEAD, whose contract
// (docs/format.md 4.3 layout, aliasing, errors) the batch methods of AEAD
// and the helpers below follow. cryptocore builds on this package, so the
// interface cannot be named here; the helpers look for these methods.
type batchAEAD interface {
	cipher.AEAD
	SealBatch(dst, nonces, plaintext []byte, blockSize int, firstBlock uint64, fileID []byte) []byte
	OpenBatch(dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error)
}

// BlockError reports which block of a batch failed to open. It is the
// cryptocore.BatchError of this package's OpenBatch.
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

// BatchIndex returns Index (cryptocore.BatchError).
func (e *BlockError) BatchIndex() int { return e.Index }

// Unwrap returns Err, so errors.Is(err, ErrAuth) works.
func (e *BlockError) Unwrap() error { return e.Err }

// SealBatch seals plaintext as consecutive content blocks with a, using
// a's own SealBatch when it has one and a loop over a.Seal otherwise. The
// contract is that of cryptocore.BatchAEAD.SealBatch.
func SealBatch(a cipher.AEAD, dst, nonces, plaintext []byte, blockSize int, firstBlock uint64, fileID []byte) []byte {
	if b, ok := a.(batchAEAD); ok {
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
// OpenBatch when it has one and a loop over a.Open otherwise. The contract
// is that of cryptocore.BatchAEAD.OpenBatch; a failing block gives a
// *BlockError.
func OpenBatch(a cipher.AEAD, dst, ciphertext []byte, blockSize int, firstBlock uint64, fileID []byte) ([]byte, error) {
	if b, ok := a.(batchAEAD); ok {
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
	n := len(plaintext) + nblocks*(ns+ov)
	ret = slices.Grow(dst, n)[:len(dst)+n]
	out = ret[len(dst):]
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
	ret = slices.Grow(dst, plainLen)[:len(dst)+plainLen]
	out = ret[len(dst):]
	inPlace = len(out) > 0 && &out[0] == &ciphertext[0]
	if !inPlace && anyOverlap(out, ciphertext) {
		panic("stupidgcm: OpenBatch: invalid buffer overlap")
	}
	if anyOverlap(out, fileID) {
		panic("stupidgcm: OpenBatch: output overlaps file ID")
	}
	return ret, out, full, short, inPlace
}

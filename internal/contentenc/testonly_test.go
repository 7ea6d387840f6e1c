package contentenc

// Helpers only the tests use: the production paths encrypt whole ranges
// (EncryptBlocks, EncryptBlocksDerived), derive nonces in place and split
// and merge partial blocks in package contentio.

import (
	"math"
	"slices"
)

// DeriveBlockNonce appends the reverse-mode nonce of block blockNo to dst
// (docs/format.md 9.1): block0IV with bytes 8..15, read as a big-endian uint64,
// increased by blockNo modulo 2^64; all other bytes unchanged. block0IV must
// be at least 16 bytes (pathiv(path, "BLOCK0IV") is exactly 16).
func DeriveBlockNonce(dst, block0IV []byte, blockNo uint64) []byte {
	n := len(dst)
	dst = append(dst, block0IV...)
	deriveNonce(dst[n:], block0IV, blockNo)
	return dst
}

// ExplodePlainRange splits the plaintext range [offset, offset+length) into
// one BlockPart per touched block, in ascending order. The hot path should
// use AppendPlainRange with a reused slice instead; length must be bounded
// by the caller (one part per 4 KiB is allocated).
func ExplodePlainRange(offset, length uint64) []BlockPart {
	return AppendPlainRange(nil, offset, length)
}

// MergeBlocks overlays newData onto the plaintext block oldPlain at
// offsetInBlock, for a read-modify-write of a partial block (docs/format.md 4.7).
// The result is max(len(oldPlain), offsetInBlock+len(newData)) bytes long; a
// gap between the old end and offsetInBlock is filled with zeros. Like
// append, it reuses oldPlain's storage when its capacity suffices, so
// newData must not overlap oldPlain's spare capacity. offsetInBlock must not
// be negative.
func MergeBlocks(oldPlain, newData []byte, offsetInBlock int) []byte {
	oldLen := len(oldPlain)
	end := offsetInBlock + len(newData)
	n := max(oldLen, end)
	out := slices.Grow(oldPlain, n-oldLen)[:n]
	if offsetInBlock > oldLen {
		clear(out[oldLen:offsetInBlock])
	}
	copy(out[offsetInBlock:end], newData)
	return out
}

// BlockPart is the piece of one plaintext block that a byte range covers.
type BlockPart struct {
	// BlockNo is the 0-based block number.
	BlockNo uint64
	// Skip is the offset of the range's first byte within the block.
	Skip int
	// Length is the number of bytes of the range in this block
	// (1..DefaultBS-Skip).
	Length int
}

// IsPartial reports whether the part does not cover the whole block, i.e.
// whether writing it needs a read-modify-write.
func (p BlockPart) IsPartial() bool {
	return p.Skip != 0 || p.Length != DefaultBS
}

// End is Skip+Length: where the part ends within the block.
func (p BlockPart) End() int {
	return p.Skip + p.Length
}

// PlainOff is the plaintext file offset at which the block starts.
func (p BlockPart) PlainOff() uint64 {
	return BlockNoToPlainOff(p.BlockNo)
}

// AppendPlainRange appends one BlockPart per block touched by the plaintext
// range [offset, offset+length) to dst, in ascending order; with enough
// capacity in dst it does not allocate. A range reaching past 2^64-1 is cut
// there.
func AppendPlainRange(dst []BlockPart, offset, length uint64) []BlockPart {
	if length > math.MaxUint64-offset {
		length = math.MaxUint64 - offset
	}
	for length > 0 {
		skip := offset % DefaultBS
		n := min(DefaultBS-skip, length)
		dst = append(dst, BlockPart{BlockNo: offset / DefaultBS, Skip: int(skip), Length: int(n)})
		offset += n
		length -= n
	}
	return dst
}

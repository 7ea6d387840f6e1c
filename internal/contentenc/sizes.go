package contentenc

import (
	"fmt"
	"math"
)

// DefaultBS is the plaintext block size. It is fixed by the format (not
// stored anywhere), so the plaintext-side arithmetic below is plain
// functions; only the ciphertext side depends on the cipher and hangs off
// ContentEnc.
const DefaultBS = 4096

// SizeProblem says why a ciphertext size did not map cleanly to a plaintext
// size. The mapping still yields a usable number; callers log the problem
// (once per file, as they see fit).
type SizeProblem int

const (
	// SizeOK: the ciphertext size is one a writer can produce.
	SizeOK SizeProblem = iota
	// SizeTruncatedHeader: 1..17 bytes, not even a complete header; the
	// plaintext size is reported as 0.
	SizeTruncatedHeader
	// SizeIncompleteBlock: the last block holds 1..BlockOverhead bytes,
	// too few for any plaintext; it is counted as one plaintext byte and
	// reading it fails.
	SizeIncompleteBlock
)

// String describes the problem for log messages.
func (p SizeProblem) String() string {
	switch p {
	case SizeOK:
		return "ok"
	case SizeTruncatedHeader:
		return "ciphertext shorter than the file header"
	case SizeIncompleteBlock:
		return "incomplete last block"
	}
	return fmt.Sprintf("SizeProblem(%d)", int(p))
}

// PlainSizeToCipherSize maps a plaintext file size to the size of its
// ciphertext file (docs/format.md 4.5): 0 stays 0, otherwise header plus one
// ciphertext block per started plaintext block. For p ≤ math.MaxInt64 the
// result does not overflow.
func (ce *ContentEnc) PlainSizeToCipherSize(p uint64) uint64 {
	if p == 0 {
		return 0
	}
	c := HeaderLen + p/DefaultBS*uint64(ce.cipherBS)
	if r := p % DefaultBS; r > 0 {
		c += r + uint64(ce.overhead)
	}
	return c
}

// CipherSizeToPlainSize maps a ciphertext file size to the plaintext size
// shown by stat (docs/format.md 4.5). Sizes no writer produces still map to a
// number (see CipherSizeToPlainSizeCheck for how, and for detecting them).
func (ce *ContentEnc) CipherSizeToPlainSize(c uint64) uint64 {
	p, _ := ce.CipherSizeToPlainSizeCheck(c)
	return p
}

// CipherSizeToPlainSizeCheck is CipherSizeToPlainSize that also reports
// whether c was a corrupt size: 1..17 bytes map to 0 (SizeTruncatedHeader);
// a last block of only 1..BlockOverhead bytes is counted as holding one
// plaintext byte (SizeIncompleteBlock), so that reading it reaches the
// block and fails instead of silently hiding it. 0 and exactly HeaderLen
// (header only, e.g. an interrupted first write) map to 0 without a problem.
func (ce *ContentEnc) CipherSizeToPlainSizeCheck(c uint64) (uint64, SizeProblem) {
	switch {
	case c == 0 || c == HeaderLen:
		return 0, SizeOK
	case c < HeaderLen:
		return 0, SizeTruncatedHeader
	}
	cbs, o := uint64(ce.cipherBS), uint64(ce.overhead)
	body := c - HeaderLen
	problem := SizeOK
	if last := body % cbs; last > 0 && last <= o {
		body = body - last + o + 1
		problem = SizeIncompleteBlock
	}
	blocks := body / cbs
	if body%cbs != 0 {
		blocks++
	}
	return body - blocks*o, problem
}

// BlockRange returns the first block touched by the plaintext range
// [offset, offset+length) and the number of touched blocks (0 for an empty
// range).
func BlockRange(offset, length uint64) (first, count uint64) {
	if length == 0 {
		return PlainOffToBlockNo(offset), 0
	}
	if length > math.MaxUint64-offset {
		length = math.MaxUint64 - offset
	}
	first = PlainOffToBlockNo(offset)
	last := PlainOffToBlockNo(offset + length - 1)
	return first, last - first + 1
}

// PlainOffToBlockNo returns the number of the block holding plaintext
// offset off.
func PlainOffToBlockNo(off uint64) uint64 {
	return off / DefaultBS
}

// BlockNoToPlainOff returns the plaintext offset at which block blockNo
// starts.
func BlockNoToPlainOff(blockNo uint64) uint64 {
	return blockNo * DefaultBS
}

// BlockNoToCipherOff returns the ciphertext file offset at which block
// blockNo starts (just after the header for block 0).
func (ce *ContentEnc) BlockNoToCipherOff(blockNo uint64) uint64 {
	return HeaderLen + blockNo*uint64(ce.cipherBS)
}

// CipherOffToBlockNo returns the number of the ciphertext block holding
// ciphertext file offset off; offsets inside the header map to block 0.
func (ce *ContentEnc) CipherOffToBlockNo(off uint64) uint64 {
	if off < HeaderLen {
		return 0
	}
	return (off - HeaderLen) / uint64(ce.cipherBS)
}

// CipherExtent returns the ciphertext byte range [cOff, cOff+cLen) that the
// plaintext range [offset, offset+length) occupies once written: from the
// start of its first block to the end of its data, so a partial last block
// ends after its own bytes and tag, not at a full block (the file ends
// there if the range is the file's last data). This is what fallocate must
// reserve, no more (docs/format.md 4.5). An empty range gives cLen 0.
func (ce *ContentEnc) CipherExtent(offset, length uint64) (cOff, cLen uint64) {
	first, count := BlockRange(offset, length)
	cOff = ce.BlockNoToCipherOff(first)
	if count == 0 {
		return cOff, 0
	}
	return cOff, ce.PlainSizeToCipherSize(offset+length) - cOff
}

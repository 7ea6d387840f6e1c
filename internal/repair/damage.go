package repair

import (
	"errors"
	"fmt"
	"io"
	"os"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// HeaderState says what is left of a ciphertext file's header.
type HeaderState int

const (
	// HeaderOK: the header parses (or the file is empty).
	HeaderOK HeaderState = iota
	// HeaderVersionDamaged: the version bytes are wrong but the file ID is
	// intact (at least one block authenticates under it).
	HeaderVersionDamaged
	// HeaderTruncated: the file is 1..17 bytes long, not even a header.
	HeaderTruncated
	// HeaderLost: the file ID is gone; no block can be decrypted.
	HeaderLost
)

// Range is a plaintext byte range [Start, End) that could not be recovered.
type Range struct {
	Start  uint64 `json:"start"`
	End    uint64 `json:"end"`
	Reason string `json:"reason"`
}

// Damage describes what is wrong with one ciphertext file, block by block.
type Damage struct {
	// CipherSize is the size of the ciphertext file.
	CipherSize int64
	// Header is the header a salvaged copy gets (the version repaired).
	Header contentenc.FileHeader
	// HeaderState is the state of the stored header.
	HeaderState HeaderState
	// HeaderErr is the reason the stored header did not parse.
	HeaderErr error
	// Blocks is the number of ciphertext blocks (an incomplete last block
	// not counted).
	Blocks uint64
	// BadBlocks are the blocks that fail to authenticate, in order.
	BadBlocks []uint64
	// badLen holds the plaintext length of each bad block.
	badLen map[uint64]int
	// Tail is the number of ciphertext bytes of an incomplete last block
	// (1..BlockOverhead bytes, too short to hold any plaintext).
	Tail int64
	// DataBytes is what a salvaged copy occupies at most: the header and
	// the blocks that are not holes.
	DataBytes int64
	// ext are the data extents of the file; full blocks outside them lie
	// in a hole (read as zeros, stored nowhere) and stay holes in a
	// salvaged copy.
	ext []syscallcompat.Extent
}

// holeCursor tells which full blocks lie in a hole, for blocks visited in
// ascending order (linear in blocks plus extents, however fragmented).
type holeCursor struct {
	d *Damage
	i int
}

// inHole reports whether the full block at ciphertext offset off lies in
// a hole; off must not decrease between calls.
func (c *holeCursor) inHole(off int64, cbs int) bool {
	ext := c.d.ext
	for c.i < len(ext) && ext[c.i].Off+ext[c.i].Len <= off {
		c.i++
	}
	end := off + int64(cbs)
	return end <= c.d.CipherSize && (c.i == len(ext) || ext[c.i].Off >= end)
}

// skip returns the number of the first block after block b (in a hole,
// at ciphertext offset off) that may hold data, so that a huge hole costs
// nothing.
func (c *holeCursor) skip(b uint64, off int64, cbs int) uint64 {
	next := c.d.CipherSize
	if c.i < len(c.d.ext) {
		next = c.d.ext[c.i].Off
	}
	return max(b+1, b+uint64((next-off)/int64(cbs)))
}

// Clean reports whether nothing is wrong.
func (d *Damage) Clean() bool {
	return d.HeaderState == HeaderOK && len(d.BadBlocks) == 0 && d.Tail == 0
}

// Salvageable reports whether the blocks can be decrypted at all.
func (d *Damage) Salvageable() bool {
	return d.HeaderState == HeaderOK || d.HeaderState == HeaderVersionDamaged
}

// OnlyVersion reports whether the version bytes are the only damage, which
// is repaired in place.
func (d *Damage) OnlyVersion() bool {
	return d.HeaderState == HeaderVersionDamaged && len(d.BadBlocks) == 0 && d.Tail == 0
}

// Kind names the worst damage for reports.
func (d *Damage) Kind() string {
	switch {
	case d.HeaderState == HeaderLost:
		return "bad-header"
	case d.HeaderState == HeaderTruncated:
		return "truncated-header"
	case len(d.BadBlocks) > 0:
		return "corrupt-blocks"
	case d.Tail > 0:
		return "truncated-block"
	case d.HeaderState == HeaderVersionDamaged:
		return "bad-header-version"
	}
	return "clean"
}

// LostRanges lists the plaintext ranges a salvaged copy does not have (as
// zeros, or cut off at the end).
func (d *Damage) LostRanges(ce *contentenc.ContentEnc) []Range {
	var out []Range
	switch d.HeaderState {
	case HeaderTruncated:
		return []Range{{0, 0, fmt.Sprintf("file header truncated to %d bytes: the whole content is lost", d.CipherSize)}}
	case HeaderLost:
		return []Range{{0, ce.CipherSizeToPlainSize(uint64(d.CipherSize)), "file header (file ID) destroyed: no block can be decrypted"}}
	}
	for _, b := range d.BadBlocks {
		s := contentenc.BlockNoToPlainOff(b)
		out = append(out, Range{s, s + uint64(d.badLen[b]), fmt.Sprintf("block %d failed to authenticate, replaced by zeros", b)})
	}
	if d.Tail > 0 {
		s := contentenc.BlockNoToPlainOff(d.Blocks)
		out = append(out, Range{s, s, fmt.Sprintf("file ends in an incomplete block of %d ciphertext bytes: whatever followed offset %d is lost", d.Tail, s)})
	}
	return out
}

// Analyze reads the ciphertext file f (opened for reading) block by block
// and records what does not decrypt. It needs the content key only to
// authenticate blocks; nothing is written.
func Analyze(ce *contentenc.ContentEnc, f *os.File) (*Damage, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	d := &Damage{CipherSize: st.Size(), badLen: map[uint64]int{}}
	if d.CipherSize == 0 {
		return d, nil
	}
	if d.CipherSize < contentenc.HeaderLen {
		d.HeaderState = HeaderTruncated
		return d, nil
	}
	hbuf := make([]byte, contentenc.HeaderLen)
	if _, err := f.ReadAt(hbuf, 0); err != nil {
		return nil, err
	}
	d.Header, d.HeaderErr = contentenc.ParseHeader(hbuf)
	if d.HeaderErr != nil {
		// Keep the stored ID and see whether blocks authenticate under it.
		copy(d.Header.ID[:], hbuf[2:])
		d.Header.Version = contentenc.CurrentVersion
		d.HeaderState = HeaderVersionDamaged
	}
	if d.ext, err = syscallcompat.DataExtents(int(f.Fd()), d.CipherSize); err != nil {
		return nil, err
	}
	d.DataBytes = contentenc.HeaderLen
	cbs := ce.CipherBS()
	buf := make([]byte, cbs)
	var plain []byte
	var good int
	holes := holeCursor{d: d}
	for b := uint64(0); ; b++ {
		off := int64(contentenc.HeaderLen) + int64(b)*int64(cbs)
		if holes.inHole(off, cbs) {
			// A full block in a hole: zeros, which is how a hole of the
			// plaintext is stored. Not read (a sparse file of 2 GiB
			// would otherwise be read as 2 GiB of zeros).
			nb := holes.skip(b, off, cbs)
			d.Blocks += nb - b
			b = nb - 1
			continue
		}
		n, err := f.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n <= ce.BlockOverhead() {
			d.Tail = int64(n)
			break
		}
		d.Blocks++
		d.DataBytes += int64(n)
		isHole := n == cbs && allZero(buf)
		plain, err = ce.DecryptBlock(plain[:0], buf[:n], b, d.Header.ID[:])
		if err != nil {
			d.BadBlocks = append(d.BadBlocks, b)
			d.badLen[b] = n - ce.BlockOverhead()
		} else if !isHole {
			good++
		}
		if n < cbs {
			break
		}
	}
	// Without a single block authenticating under the stored ID there is
	// no evidence that the ID survived.
	if d.HeaderState == HeaderVersionDamaged && good == 0 {
		d.HeaderState = HeaderLost
		d.BadBlocks = nil
	}
	return d, nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// writeSalvaged writes to the empty file w a ciphertext file holding
// every block of src that authenticates, with the repaired header; bad
// full blocks become holes (which read as zeros), a bad short last block
// becomes encrypted zeros of its length, and an incomplete tail is
// dropped. Blocks in a hole of src and all-zero blocks stay holes. The
// result decrypts completely with the same content key.
func writeSalvaged(ce *contentenc.ContentEnc, d *Damage, src *os.File, w int) error {
	if d.CipherSize == 0 {
		return nil
	}
	if err := syscallcompat.PwriteFull(w, d.Header.Pack(), 0); err != nil {
		return err
	}
	end := int64(contentenc.HeaderLen)
	cbs := ce.CipherBS()
	buf := make([]byte, cbs)
	bad := map[uint64]bool{}
	for _, b := range d.BadBlocks {
		bad[b] = true
	}
	holes := holeCursor{d: d}
	for b := uint64(0); b < d.Blocks; b++ {
		off := int64(contentenc.HeaderLen) + int64(b)*int64(cbs)
		if holes.inHole(off, cbs) {
			nb := min(holes.skip(b, off, cbs), d.Blocks)
			end = off + int64(nb-b)*int64(cbs)
			b = nb - 1
			continue
		}
		n, err := src.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		out := buf[:n]
		end = off + int64(n)
		if bad[b] {
			if n == cbs {
				continue // a hole
			}
			out = ce.EncryptBlock(nil, make([]byte, n-ce.BlockOverhead()), b, d.Header.ID[:])
		}
		if n == cbs && allZero(out) {
			continue
		}
		if err := syscallcompat.PwriteFull(w, out, off); err != nil {
			return err
		}
	}
	return syscallcompat.Ftruncate(w, end)
}

// encryptContent returns a new ciphertext file holding plain.
func encryptContent(ce *contentenc.ContentEnc, plain []byte) []byte {
	if len(plain) == 0 {
		return nil
	}
	h := contentenc.RandomHeader(nil)
	out := h.Pack()
	for b := uint64(0); len(plain) > 0; b++ {
		n := min(len(plain), contentenc.DefaultBS)
		out = ce.EncryptBlock(out, plain[:n], b, h.ID[:])
		plain = plain[n:]
	}
	return out
}

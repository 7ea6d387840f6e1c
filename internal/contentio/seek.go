package contentio

import (
	"context"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/syscallcompat"
)

// Hole detection (docs/format.md 4.4): a ciphertext block is a plaintext hole
// exactly when it was never written, and then its nonce reads as zeros (a
// written block never has an all-zero nonce). The backing filesystem's
// SEEK_DATA/SEEK_HOLE only serve to skip long runs quickly: they answer in
// units of the backing filesystem's blocks, which are not aligned to the
// 4128-byte ciphertext blocks, so a filesystem block shared by a written
// block and an unwritten neighbour reports data for both. Each candidate
// block's nonce therefore decides. The answers are those of a local
// filesystem with 4096-byte blocks holding the plaintext, with one
// exception the format imposes: a partial last block is always written
// (4.7), so a file whose size is not a multiple of 4096 never ends in a
// hole.

// SeekData implements lseek(SEEK_DATA): it returns the smallest plaintext
// offset ≥ off that lies in a written block, or an error wrapping ENXIO
// when off is at or past the end of file or only holes follow.
func (f *File) SeekData(ctx context.Context, off uint64) (uint64, error) {
	h, err := f.sharedLock(ctx, 0, 0)
	if err != nil {
		return 0, err
	}
	defer f.release(h)
	cs, ps, err := f.sizes()
	if err != nil {
		return 0, err
	}
	return f.seekDataLocked(off, cs, ps)
}

// SeekHole implements lseek(SEEK_HOLE): it returns the smallest plaintext
// offset ≥ off inside a hole block, the end of file counting as a hole, or
// an error wrapping ENXIO when off is at or past the end of file.
func (f *File) SeekHole(ctx context.Context, off uint64) (uint64, error) {
	h, err := f.sharedLock(ctx, 0, 0)
	if err != nil {
		return 0, err
	}
	defer f.release(h)
	cs, ps, err := f.sizes()
	if err != nil {
		return 0, err
	}
	return f.seekHoleLocked(off, cs, ps)
}

func errNXIO(op string, off uint64) error {
	return fmt.Errorf("contentio: %s at %d: %w", op, off, syscall.ENXIO)
}

// seekDataLocked is SeekData with the content lock held; cs and ps are the
// ciphertext and plaintext sizes.
func (f *File) seekDataLocked(off, cs, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_DATA", off)
	}
	nb := f.blockCount(ps)
	for b := off / bs; b < nb; {
		c, err := syscallcompat.Lseek(f.fd, int64(f.ce.BlockNoToCipherOff(b)), unix.SEEK_DATA)
		if err == syscall.ENXIO {
			break
		}
		if err != nil {
			return 0, opError("lseek SEEK_DATA", err)
		}
		b = max(b, f.ce.CipherOffToBlockNo(uint64(c)))
		// The backing data run starting at c ends at h; every block
		// starting inside it is a candidate.
		h, err := syscallcompat.Lseek(f.fd, max(c, int64(f.ce.BlockNoToCipherOff(b))), unix.SEEK_HOLE)
		if err != nil {
			return 0, opError("lseek SEEK_HOLE", err)
		}
		end := min(nb, f.firstBlockFrom(uint64(h)))
		w, err := f.scanBlocks(b, end, true)
		if err != nil {
			return 0, err
		}
		if w < end {
			return max(off, w*bs), nil
		}
		b = max(end, b+1)
	}
	return 0, errNXIO("SEEK_DATA", off)
}

// seekHoleLocked is SeekHole with the content lock held; cs and ps are the
// ciphertext and plaintext sizes.
func (f *File) seekHoleLocked(off, cs, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_HOLE", off)
	}
	nb := f.blockCount(ps)
	b := off / bs
	h, err := syscallcompat.Lseek(f.fd, int64(f.ce.BlockNoToCipherOff(b)), unix.SEEK_HOLE)
	if err != nil {
		return 0, opError("lseek SEEK_HOLE", err)
	}
	// Blocks starting before h start in backing data and are checked one
	// by one; the first one starting at or after h starts in a backing
	// hole, so it is a hole.
	end := min(nb, f.firstBlockFrom(uint64(h)))
	w, err := f.scanBlocks(b, end, false)
	if err != nil {
		return 0, err
	}
	if w < nb {
		return max(off, w*bs), nil
	}
	return ps, nil
}

// blockCount returns the number of blocks of a file of plaintext size ps.
func (f *File) blockCount(ps uint64) uint64 { return (ps + bs - 1) / bs }

// firstBlockFrom returns the number of the first block that starts at or
// after ciphertext offset c.
func (f *File) firstBlockFrom(c uint64) uint64 {
	const hl = contentenc.HeaderLen
	if c <= hl {
		return 0
	}
	return (c - hl + f.cbs - 1) / f.cbs
}

// scanBlocks returns the first block in [from, to) that is written (when
// written is true) or a hole (when false), or to if there is none. It reads
// only the nonces, in batches.
func (f *File) scanBlocks(from, to uint64, written bool) (uint64, error) {
	nl := uint64(f.ce.NonceSize())
	const batch = 32
	buf := make([]byte, batch*f.cbs)
	for b := from; b < to; {
		n := min(to-b, batch)
		c := buf[:(n-1)*f.cbs+nl]
		m, err := syscallcompat.PreadFull(f.fd, c, int64(f.ce.BlockNoToCipherOff(b)))
		if err != nil {
			return 0, opError("pread", err)
		}
		for i := range n {
			lo := i * f.cbs
			hole := true
			if lo < uint64(m) {
				for _, x := range c[lo:min(lo+nl, uint64(m))] {
					if x != 0 {
						hole = false
						break
					}
				}
			}
			if hole != written {
				return b + i, nil
			}
		}
		b += n
	}
	return to, nil
}

// coarseSeekData is the conservative SEEK_DATA of verification: it trusts
// the backing filesystem's allocation alone (rounded down to a block), so a
// damaged block with an all-zero nonce is still visited; ps is the
// plaintext size.
func (f *File) coarseSeekData(off, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_DATA", off)
	}
	c, err := syscallcompat.Lseek(f.fd, int64(f.ce.BlockNoToCipherOff(off/bs)), unix.SEEK_DATA)
	if err == syscall.ENXIO {
		return 0, errNXIO("SEEK_DATA", off)
	}
	if err != nil {
		return 0, opError("lseek SEEK_DATA", err)
	}
	p := max(off, f.ce.CipherOffToBlockNo(uint64(c))*bs)
	if p >= ps {
		return 0, errNXIO("SEEK_DATA", off)
	}
	return p, nil
}

// coarseSeekHole is the conservative SEEK_HOLE of verification: only
// ciphertext blocks lying entirely inside a backing hole count as holes;
// cs and ps are the ciphertext and plaintext sizes.
func (f *File) coarseSeekHole(off, cs, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_HOLE", off)
	}
	const hl = contentenc.HeaderLen
	c := f.ce.BlockNoToCipherOff(off / bs)
	for c < cs {
		h, err := syscallcompat.Lseek(f.fd, int64(c), unix.SEEK_HOLE)
		if err != nil {
			return 0, opError("lseek SEEK_HOLE", err)
		}
		if uint64(h) >= cs {
			break
		}
		d := cs
		next, err := syscallcompat.Lseek(f.fd, h, unix.SEEK_DATA)
		switch {
		case err == nil:
			d = uint64(next)
		case err != syscall.ENXIO:
			return 0, opError("lseek SEEK_DATA", err)
		}
		// Whole ciphertext blocks inside the backing hole [h, d).
		hb := max(uint64(h), hl) // the header is never a hole
		firstHole := (hb - hl + f.cbs - 1) / f.cbs
		endHole := uint64(0)
		if d >= hl {
			endHole = (d - hl) / f.cbs
		}
		if firstHole < endHole {
			return max(off, firstHole*bs), nil
		}
		if d <= c {
			break // no progress: should not happen, end the search safely
		}
		c = d
	}
	return ps, nil
}

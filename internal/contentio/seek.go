package contentio

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
)

// SeekData implements lseek(SEEK_DATA): it returns the smallest plaintext
// offset ≥ off that may hold data, or an error wrapping ENXIO when off is
// at or past the end of file or only holes follow. It asks the backing
// filesystem for data at or after the ciphertext block holding off and
// rounds the answer down to the start of the plaintext block, so the
// result is block-granular and conservative: it never skips data, but may
// report a block of zeros as data.
func (f *File) SeekData(off uint64) (uint64, error) {
	defer f.release(f.sharedLock(0, 0))
	_, ps, err := f.sizes()
	if err != nil {
		return 0, err
	}
	return f.seekDataLocked(off, ps)
}

// SeekHole implements lseek(SEEK_HOLE): it returns the smallest plaintext
// offset ≥ off at which a hole starts, the end of file counting as a hole,
// or an error wrapping ENXIO when off is at or past the end of file. A
// plaintext hole is reported only for ciphertext blocks that lie entirely
// inside a hole of the backing file, so the result never hides data.
// Because ciphertext blocks (4128 or 4136 bytes) are not aligned to the
// backing filesystem's blocks, an isolated hole block next to data is
// usually not recognised.
func (f *File) SeekHole(off uint64) (uint64, error) {
	defer f.release(f.sharedLock(0, 0))
	cs, ps, err := f.sizes()
	if err != nil {
		return 0, err
	}
	return f.seekHoleLocked(off, cs, ps)
}

func errNXIO(op string, off uint64) error {
	return fmt.Errorf("contentio: %s at %d: %w", op, off, syscall.ENXIO)
}

// seekDataLocked is SeekData with the content lock held; ps is the
// plaintext size.
func (f *File) seekDataLocked(off, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_DATA", off)
	}
	c, err := lseek(f.fd, int64(f.ce.BlockNoToCipherOff(off/bs)), unix.SEEK_DATA)
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

// seekHoleLocked is SeekHole with the content lock held; cs and ps are the
// ciphertext and plaintext sizes.
func (f *File) seekHoleLocked(off, cs, ps uint64) (uint64, error) {
	if off >= ps {
		return 0, errNXIO("SEEK_HOLE", off)
	}
	const hl = contentenc.HeaderLen
	c := f.ce.BlockNoToCipherOff(off / bs)
	for c < cs {
		h, err := lseek(f.fd, int64(c), unix.SEEK_HOLE)
		if err != nil {
			return 0, opError("lseek SEEK_HOLE", err)
		}
		if uint64(h) >= cs {
			break
		}
		d := cs
		next, err := lseek(f.fd, h, unix.SEEK_DATA)
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

package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
)

// algo describes the block layout of a content cipher (docs/format.md 4.3).
// Nothing is decrypted, so only the sizes matter.
type algo struct {
	name     string
	nonceLen int
	// tagAfterNonce: AES-SIV stores the synthetic IV (shown as the tag)
	// right after the nonce; the AEADs put the tag at the end.
	tagAfterNonce bool
}

func (a algo) cipherBS() int { return a.nonceLen + contentenc.DefaultBS + cryptocore.TagLen }

// algoFor returns the layout selected by the flags: AES-GCM by default,
// -aessiv winning over -xchacha.
func algoFor(o options) algo {
	switch {
	case o.aessiv:
		return algo{name: cryptocore.AESSIV.String(), nonceLen: cryptocore.AESSIV.NonceSize(), tagAfterNonce: true}
	case o.xchacha:
		return algo{name: cryptocore.XChaCha20Poly1305.String(), nonceLen: cryptocore.XChaCha20Poly1305.NonceSize()}
	}
	return algo{name: cryptocore.AESGCM.String(), nonceLen: cryptocore.AESGCM.NonceSize()}
}

// inspect prints the header and the nonce, tag, offset and length of every
// block of the ciphertext file at path (docs/cli.md 9). Holes show up with
// all-zero IV and tag. Only a regular file is read: a FIFO or device
// node (which whoever writes CIPHERDIR may put in place of a file) is
// refused without being opened (a stat first: opening some devices has
// side effects) and, if it was swapped in after the stat, without
// blocking in open (O_NONBLOCK) or being read from.
func inspect(path string, a algo, stdout, stderr io.Writer) int {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		fmt.Fprintf(stderr, "%s: not a regular file (%s)\n", path, fi.Mode().Type())
		return exitcodes.Usage
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcodes.Usage
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
		}
		fmt.Fprintln(stderr, err)
		return exitcodes.Usage
	}
	var hdr [contentenc.HeaderLen]byte
	n, err := io.ReadFull(f, hdr[:])
	switch {
	case n == 0 && err == io.EOF:
		fmt.Fprintln(stdout, "empty file")
		return exitcodes.Success
	case err == io.ErrUnexpectedEOF:
		fmt.Fprintf(stderr, "incomplete file header: read %d bytes, want %d\n", n, contentenc.HeaderLen)
		return exitcodes.Usage
	case err != nil:
		fmt.Fprintln(stderr, err)
		return exitcodes.Usage
	}
	h, err := contentenc.ParseHeader(hdr[:])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcodes.Usage
	}
	fmt.Fprintf(stdout, "Header: Version: %d, Id: %x, assuming %s mode\n", h.Version, h.ID, a.name)

	cbs := a.cipherBS()
	minLen := a.nonceLen + cryptocore.TagLen + 1
	buf := make([]byte, cbs)
	off := int64(contentenc.HeaderLen)
	for i := 0; ; i++ {
		n, err := io.ReadFull(f, buf)
		if n == 0 && err == io.EOF {
			return exitcodes.Success
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			fmt.Fprintln(stderr, err)
			return exitcodes.Usage
		}
		if n < minLen {
			fmt.Fprintf(stderr, "corrupt block: truncated data, len=%d\n", n)
			return exitcodes.Usage
		}
		blk := buf[:n]
		iv := blk[:a.nonceLen]
		tag := blk[n-cryptocore.TagLen:]
		if a.tagAfterNonce {
			tag = blk[a.nonceLen : a.nonceLen+cryptocore.TagLen]
		}
		fmt.Fprintf(stdout, "Block %2d: IV: %x, Tag: %x, Offset: %5d Len: %d\n", i, iv, tag, off, n)
		off += int64(n)
	}
}

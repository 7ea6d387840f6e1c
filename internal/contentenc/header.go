package contentenc

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"gocryptfs/internal/cryptocore"
)

const (
	// CurrentVersion is the only file-header version this format has
	// (docs/format.md 4.2). It is the same number as the config file version.
	CurrentVersion = 2
	// FileIDLen is the length of the random per-file ID stored in the
	// header and mixed into every block's associated data.
	FileIDLen = 16
	// HeaderLen is the length of the file header, BE16(version) ‖ file ID.
	// Block 0 of the ciphertext starts right after it.
	HeaderLen = 2 + FileIDLen
)

// ErrBadHeader is wrapped by every error that ParseHeader returns, so that
// callers can tell a corrupt header (EIO) from an I/O error.
var ErrBadHeader = errors.New("bad file header")

// FileHeader is the decoded 18-byte header at the start of every non-empty
// ciphertext file.
type FileHeader struct {
	// Version is the format version; CurrentVersion for every valid header.
	Version uint16
	// ID is the file ID: random in forward mode, pathiv(path, "FILEID") in
	// reverse mode. Blocks are bound to it through their associated data.
	ID [FileIDLen]byte
}

// headerError carries the exact message the reference logs (tests and
// users compare against it) while still matching ErrBadHeader.
type headerError struct{ msg string }

func (e *headerError) Error() string        { return e.msg }
func (e *headerError) Is(target error) bool { return target == ErrBadHeader }

// ParseHeader decodes and validates a file header. buf must be exactly
// HeaderLen bytes: a file of 1..17 bytes has no complete header and is
// corrupt. The header must not be all zero, its version must be
// CurrentVersion and the file ID must not be all zero. Every returned error
// wraps ErrBadHeader and starts with "ParseHeader: "; the version error has
// the reference's wording ("invalid version, want=2 have=N. Header hexdump:
// <hex>").
func ParseHeader(buf []byte) (FileHeader, error) {
	var h FileHeader
	if len(buf) != HeaderLen {
		return h, &headerError{fmt.Sprintf("ParseHeader: invalid length, want=%d have=%d. Header hexdump: %s",
			HeaderLen, len(buf), hex.EncodeToString(buf))}
	}
	if allZero(buf) {
		return h, &headerError{"ParseHeader: header is all-zero. Header hexdump: " + hex.EncodeToString(buf)}
	}
	h.Version = binary.BigEndian.Uint16(buf)
	if h.Version != CurrentVersion {
		return h, &headerError{fmt.Sprintf("ParseHeader: invalid version, want=%d have=%d. Header hexdump: %s",
			CurrentVersion, h.Version, hex.EncodeToString(buf))}
	}
	copy(h.ID[:], buf[2:])
	if allZero(h.ID[:]) {
		return h, &headerError{"ParseHeader: file ID is all-zero. Header hexdump: " + hex.EncodeToString(buf)}
	}
	return h, nil
}

// RandomHeader returns a CurrentVersion header with a fresh random file ID,
// for the first write into an empty file. The ID comes from ns, whose output
// is never all zero; with a nil ns it is read from crypto/rand directly.
func RandomHeader(ns *cryptocore.NonceSource) FileHeader {
	h := FileHeader{Version: CurrentVersion}
	if ns != nil {
		ns.Fill(h.ID[:])
		return h
	}
	for allZero(h.ID[:]) {
		// crypto/rand.Read does not fail on supported platforms (it
		// crashes the program instead); an all-zero draw is retried
		// because ParseHeader would reject it.
		rand.Read(h.ID[:])
	}
	return h
}

// AppendTo appends the 18-byte encoding of h to dst and returns the result.
func (h FileHeader) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, h.Version)
	return append(dst, h.ID[:]...)
}

// Pack returns the 18-byte on-disk encoding of h in a new slice.
func (h FileHeader) Pack() []byte {
	return h.AppendTo(make([]byte, 0, HeaderLen))
}

// allZero reports whether b contains only zero bytes. The data it inspects
// (headers, nonces, ciphertext) is not secret, so it need not be constant
// time.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.NativeEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

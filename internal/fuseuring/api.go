// This file holds what every system shares: the API types, the kernel
// parameter and the error reply; fuseuring.go is the Linux transport,
// fuseuring_other.go its stub elsewhere.

package fuseuring

import (
	"log/slog"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// ErrorReply turns the answer of a Handler (n bytes in out, status st)
// to the request unique into an error reply when it is one: a failed
// status, or an answer too short to hold an out header (EIO then), is
// written as a bare out header to out, which holds at least 16 bytes.
// It returns the length of the reply. Both transports use it, so that a
// request fails the same way whichever way it came.
func ErrorReply(out []byte, n int, st fuse.Status, unique uint64) int {
	if st.Ok() && n >= outHeaderSize {
		return n
	}
	if st.Ok() {
		st = fuse.EIO
	}
	oh := (*fuse.OutHeader)(unsafe.Pointer(&out[0]))
	*oh = fuse.OutHeader{Length: outHeaderSize, Status: -int32(st), Unique: unique}
	return outHeaderSize
}

// ParamPath is the module parameter that enables FUSE over io_uring.
const ParamPath = "/sys/module/fuse/parameters/enable_uring"

// outHeaderSize is sizeof(struct fuse_out_header).
const outHeaderSize = 16

// Handler serves one request: in holds the request (header, operation
// header, payload) as one byte stream, out receives the reply (out
// header, then the rest) and the result is the number of bytes written.
// A Status other than OK means the request could not be decoded. It is
// called concurrently.
type Handler func(in, out [][]byte) (int, fuse.Status)

// Config shapes the rings.
type Config struct {
	// MaxWrite is the max_write negotiated at INIT; each entry's payload
	// buffer holds that much (the kernel refuses smaller ones).
	MaxWrite int
	// Entries is the number of entries a queue of a usable CPU starts
	// with (default 2); MaxEntries caps its growth (default 256).
	Entries, MaxEntries int
	// Log receives the reasons a queue stops early. Nil discards them.
	Log *slog.Logger
	// MountPoint, if set, is where the connection is mounted; see kick.
	MountPoint string
}

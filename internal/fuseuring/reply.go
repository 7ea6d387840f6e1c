package fuseuring

import (
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

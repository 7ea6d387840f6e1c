//go:build !linux

package fuseutil

import (
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// StatfsFromUnix fills out from a backing statfs result (statfs is passed
// through by both frontends, docs/format.md section 10). The name length
// limit is NAME_MAX, 255 on macOS and FreeBSD.
func StatfsFromUnix(st *unix.Statfs_t, out *fuse.StatfsOut) {
	out.Blocks = st.Blocks
	out.Bfree = st.Bfree
	out.Bavail = uint64(st.Bavail)
	out.Files = st.Files
	out.Ffree = uint64(st.Ffree)
	out.Bsize = uint32(st.Bsize)
	out.NameLen = 255
	out.Frsize = uint32(st.Bsize)
}

package fuseutil

import (
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// StatfsFromUnix fills out from a backing statfs result (statfs is passed
// through by both frontends, docs/format.md section 10).
func StatfsFromUnix(st *unix.Statfs_t, out *fuse.StatfsOut) {
	out.Blocks = st.Blocks
	out.Bfree = st.Bfree
	out.Bavail = st.Bavail
	out.Files = st.Files
	out.Ffree = st.Ffree
	out.Bsize = uint32(st.Bsize)
	out.NameLen = uint32(st.Namelen)
	out.Frsize = uint32(st.Frsize)
}

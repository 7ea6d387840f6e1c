// Package fuseutil holds the small pieces that the forward and the reverse
// FUSE frontends share: turning Go errors into the errno sent to the
// kernel, recovering from a panic inside one request, and converting
// backing-file stat results into FUSE attributes.
package fuseutil

import (
	"errors"
	"log/slog"
	"runtime/debug"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// ToErrno returns the errno to send to the kernel for err: 0 for nil, the
// syscall.Errno found in err's chain, or EIO for anything else. known is
// false in the last case, so that callers can log the unexpected error
// instead of silently losing it.
func ToErrno(err error) (errno syscall.Errno, known bool) {
	if err == nil {
		return 0, true
	}
	if errors.As(err, &errno) {
		return errno, true
	}
	return syscall.EIO, false
}

// Recover turns a panic inside one FUSE request into EIO for that request,
// logging it with its stack, so that one bad file cannot take the whole
// mount down. Use it as the deferred function itself ("defer
// fuseutil.Recover(log, "Lookup", &errno)" with a named errno result);
// recover only works there.
func Recover(log *slog.Logger, op string, errno *syscall.Errno) {
	if r := recover(); r != nil {
		if log != nil {
			log.Error("panic in FUSE request, returning EIO", "op", op, "panic", r, "stack", string(debug.Stack()))
		}
		*errno = syscall.EIO
	}
}

// ApplyOwner overrides the owner of out with o (-force_owner); nil leaves
// it alone.
func ApplyOwner(out *fuse.Attr, o *fuse.Owner) {
	if o != nil {
		out.Uid = o.Uid
		out.Gid = o.Gid
	}
}

// XattrResult answers a getxattr or listxattr request whose result is val:
// the bytes copied into dest, or ERANGE with the needed size when dest is
// too small. go-fuse turns that ERANGE into the size answer when the caller
// only asked for the size (dest empty), so both frontends share this one
// rule.
func XattrResult(dest, val []byte) (uint32, syscall.Errno) {
	if len(dest) < len(val) {
		return uint32(len(val)), syscall.ERANGE
	}
	return uint32(copy(dest, val)), 0
}

// AttrFromStat fills out from a backing stat result. Ino and Size are
// copied as they are; frontends overwrite them with their own mapping.
func AttrFromStat(st *unix.Stat_t, out *fuse.Attr) {
	out.Ino = st.Ino
	out.Size = uint64(st.Size)
	out.Blocks = uint64(st.Blocks)
	out.Atime = uint64(st.Atim.Sec)
	out.Atimensec = uint32(st.Atim.Nsec)
	out.Mtime = uint64(st.Mtim.Sec)
	out.Mtimensec = uint32(st.Mtim.Nsec)
	out.Ctime = uint64(st.Ctim.Sec)
	out.Ctimensec = uint32(st.Ctim.Nsec)
	out.Mode = uint32(st.Mode) // uint16 on darwin and freebsd
	out.Nlink = uint32(st.Nlink)
	out.Uid = st.Uid
	out.Gid = st.Gid
	out.Rdev = uint32(st.Rdev)
	out.Blksize = uint32(st.Blksize)
}

package mountopts

import (
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// capHandleKillprivV2 is the INIT flag FUSE_HANDLE_KILLPRIV_V2 (go-fuse
// defines it for Linux only).
const capHandleKillprivV2 = fuse.CAP_HANDLE_KILLPRIV_V2

// The mount_setattr(2) bits of MountAttrs.
const (
	mountAttrNodiratime  = unix.MOUNT_ATTR_NODIRATIME
	mountAttrNosymfollow = unix.MOUNT_ATTR_NOSYMFOLLOW
	mountAttrStrictatime = unix.MOUNT_ATTR_STRICTATIME
	mountAttrAtime       = unix.MOUNT_ATTR__ATIME
)

// writebackCache: the kernel's writeback cache may be asked for (Writeback).
const writebackCache = true

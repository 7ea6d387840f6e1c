//go:build !linux

package mountopts

// capHandleKillprivV2: FUSE_HANDLE_KILLPRIV_V2 is a Linux INIT flag (go-fuse
// defines it for Linux only); elsewhere nothing is asked for.
const capHandleKillprivV2 = 0

// The mount_setattr(2) bits of MountAttrs are Linux only, and this build
// does not mount (README "Platforms"): Attrs yields no bits, and the
// options stay away from the (Linux) fusermount3 as on Linux.
const (
	mountAttrNodiratime  = 0
	mountAttrNosymfollow = 0
	mountAttrStrictatime = 0
	mountAttrAtime       = 0
)

// writebackCache: never asked for here (see Writeback).
const writebackCache = false

package fusefrontend

import (
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// The system-specific pieces of the frontend on macOS (see
// platform_linux.go). Built and vetted, never run here: there is no macOS
// machine in this project's tests.

// macFUSE passes the flags of renamex_np(2) in its rename requests
// (go-fuse's own loopback hands them on to renameatx_np unchanged), not
// Linux's: RENAME_EXCL is "no replace", RENAME_SWAP the exchange. macOS
// has no whiteouts.
const (
	renameNoReplace = unix.RENAME_EXCL
	renameExchange  = unix.RENAME_SWAP
	renameWhiteout  = 0
)

// backingRenameFlags converts the flags of a FUSE rename request into
// syscallcompat.Renameat2 flags (Linux's values, which it maps back).
func backingRenameFlags(flags uint32) uint {
	var out uint
	if flags&renameNoReplace != 0 {
		out |= syscallcompat.RenameNoReplace
	}
	if flags&renameExchange != 0 {
		out |= syscallcompat.RenameExchange
	}
	return out
}

// oTmpfile: there is no O_TMPFILE; Tmpfile reports EOPNOTSUPP.
const oTmpfile = 0

// totalRAM returns the size of the memory in bytes (0 if unknown).
func totalRAM() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}

// ofdSetlk and ofdGetlk: there are no open file description locks, so
// locks cannot be forwarded (Args.ForwardLocks, which the mount refuses
// here: -sharedstorage); EOPNOTSUPP.
func ofdSetlk(fd int, flk *syscall.Flock_t) error { return syscall.EOPNOTSUPP }

func ofdGetlk(fd int, flk *syscall.Flock_t) error { return syscall.EOPNOTSUPP }

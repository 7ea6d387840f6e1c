package fusefrontend

import (
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// The system-specific pieces of the frontend on Linux. The other systems'
// counterparts (platform_darwin.go) say what they lack; which mount
// options are refused there for it is in docs/cli.md, "Platforms".

// The rename flags of FUSE requests are Linux's renameat2 flags, which
// syscallcompat.Renameat2 takes as they are.
const (
	renameNoReplace = unix.RENAME_NOREPLACE
	renameExchange  = unix.RENAME_EXCHANGE
	renameWhiteout  = unix.RENAME_WHITEOUT
)

// backingRenameFlags converts the flags of a FUSE rename request into
// syscallcompat.Renameat2 flags.
func backingRenameFlags(flags uint32) uint { return uint(flags) }

// oTmpfile is the open flag that makes an unnamed file (tmpfile.go).
const oTmpfile = unix.O_TMPFILE

// totalRAM returns the size of the memory in bytes (0 if unknown).
func totalRAM() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// ofdSetlk and ofdGetlk are fcntl F_OFD_SETLK and F_OFD_GETLK: the
// forwarded locks are open file description locks (locks.go).
func ofdSetlk(fd int, flk *syscall.Flock_t) error {
	return syscallcompat.Retry(func() error { return syscall.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, flk) })
}

func ofdGetlk(fd int, flk *syscall.Flock_t) error {
	return syscallcompat.Retry(func() error { return syscall.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, flk) })
}

package fusefrontend

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// Access times. The kernel never updates the atime of a FUSE inode
// itself; what the mount shows is the backing file's atime, which the
// backing filesystem updates when this process reads the backing file,
// following the backing mount's policy (usually relatime). The policy of
// the mount's own options (-ko noatime, strictatime, relatime) is applied
// on top of that.

// Atime is the access time policy of the mount.
type Atime int

const (
	// AtimeRelatime (the default) leaves atime updates to the backing
	// filesystem, which is relatime on a default Linux mount.
	AtimeRelatime Atime = iota
	// AtimeNoatime never changes the atime: backing files and
	// directories are read through O_NOATIME descriptors.
	AtimeNoatime
	// AtimeStrict sets the atime on every read, explicitly after the
	// read (the backing filesystem may be relatime), which also sets the
	// backing ctime.
	AtimeStrict
)

// AtimeFromOptions returns the policy selected by kernel mount options as
// given with -ko: the last of noatime, relatime and strictatime wins.
// (Package mountopts does not pass relatime and strictatime on to
// fusermount3, which refuses them.)
func AtimeFromOptions(opts []string) Atime {
	a := AtimeRelatime
	for _, o := range opts {
		switch o {
		case "noatime":
			a = AtimeNoatime
		case "relatime":
			a = AtimeRelatime
		case "strictatime":
			a = AtimeStrict
		}
	}
	return a
}

// noatimeFlag returns O_NOATIME when the policy is noatime.
func (rn *RootNode) noatimeFlag() int {
	if rn.args.Atime == AtimeNoatime {
		return unix.O_NOATIME
	}
	return 0
}

// openNoatime opens like open with O_NOATIME added under the noatime
// policy; O_NOATIME is refused (EPERM) on files this process neither owns
// nor may override, which are then opened without it.
func (rn *RootNode) openNoatime(flags int, open func(flags int) (int, error)) (int, error) {
	fl := rn.noatimeFlag()
	if fl == 0 {
		return open(flags)
	}
	fd, err := open(flags | fl)
	if errors.Is(err, syscall.EPERM) {
		return open(flags)
	}
	return fd, err
}

// touchAtime sets the atime of the backing file fd to now after a read
// under the strictatime policy (the backing filesystem may not have, being
// relatime).
func (rn *RootNode) touchAtime(fd int) {
	if rn.args.Atime != AtimeStrict {
		return
	}
	ts := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, syscallcompat.ProcFdPath(fd), ts, 0); err != nil {
		rn.log.Debug("strictatime: could not set atime", "err", err)
	}
}

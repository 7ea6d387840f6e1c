package fusefrontend

import (
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// Access times. The kernel never updates the atime of a FUSE inode
// itself; what the mount shows is the backing file's atime, which the
// backing filesystem updates when this process reads the backing file,
// following the backing mount's policy (usually relatime). The policy of
// the mount's own options (-ko noatime, strictatime, relatime) is applied
// on top of that. A read the kernel's page cache answers is never seen
// here, so an open does not keep the page cache when the next read is due
// to update the atime (keepcache.go).

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
// given with -ko: the last of noatime, relatime (or atime) and strictatime
// wins. (Package mountopts sets strictatime on the mount after mounting,
// as fusermount3 refuses it.)
func AtimeFromOptions(opts []string) Atime {
	a := AtimeRelatime
	for _, o := range opts {
		switch o {
		case "noatime":
			a = AtimeNoatime
		case "relatime", "atime":
			a = AtimeRelatime
		case "strictatime":
			a = AtimeStrict
		}
	}
	return a
}

// NoDiratimeFromOptions reports whether kernel mount options as given
// with -ko ask not to update the atime of directories: the last of
// nodiratime and diratime wins. (noatime covers directories anyway.)
func NoDiratimeFromOptions(opts []string) bool {
	no := false
	for _, o := range opts {
		switch o {
		case "nodiratime":
			no = true
		case "diratime":
			no = false
		}
	}
	return no
}

// noatimeFlag returns O_NOATIME when the policy is noatime, or for a
// directory (dir) with nodiratime.
func (rn *RootNode) noatimeFlag(dir bool) int {
	if rn.args.Atime == AtimeNoatime || dir && rn.args.NoDiratime {
		return syscallcompat.NoatimeFlag
	}
	return 0
}

// openNoatime opens like open with O_NOATIME added under the noatime
// policy (and for directories, flags with O_DIRECTORY, under nodiratime);
// O_NOATIME is refused (EPERM) on files this process neither owns nor may
// override, which are then opened without it.
func (rn *RootNode) openNoatime(flags int, open func(flags int) (int, error)) (int, error) {
	fl := rn.noatimeFlag(flags&unix.O_DIRECTORY != 0)
	if fl == 0 {
		return open(flags)
	}
	fd, err := open(flags | fl)
	if errors.Is(err, syscall.EPERM) {
		return open(flags)
	}
	return fd, err
}

// relatimeWindow is how old an atime may get before relatime updates it
// even when the file has not changed (as the kernel's relatime does).
const relatimeWindow = 24 * time.Hour

// atimeDue reports whether the policy makes the next read of a file with
// the backing stat st update its atime, at time now: never under noatime,
// always under strictatime, and under relatime when the atime is not
// after the mtime or the ctime or is a day old (the kernel's rule, which
// the backing filesystem applies to the backing file's read) unless that
// filesystem is mounted noatime: the read could not move the atime there,
// and dropping the page cache for it would only cost a reread of the file
// at every open.
func (rn *RootNode) atimeDue(st *unix.Stat_t, now time.Time) bool {
	switch {
	case rn.args.Atime == AtimeNoatime:
		return false
	case rn.args.Atime == AtimeStrict:
		return true
	case rn.backingNoatime:
		return false
	}
	atime := time.Unix(st.Atim.Unix())
	return !atime.After(time.Unix(st.Mtim.Unix())) || !atime.After(time.Unix(st.Ctim.Unix())) ||
		now.Sub(atime) >= relatimeWindow
}

// touchAtime sets the atime of the backing file fd to now after a read
// under the strictatime policy (the backing filesystem may not have, being
// relatime).
func (rn *RootNode) touchAtime(fd int) {
	if rn.args.Atime != AtimeStrict {
		return
	}
	ts := [2]unix.Timespec{{Nsec: syscallcompat.UtimeNow}, {Nsec: syscallcompat.UtimeOmit}}
	if err := syscallcompat.UtimesNanoFd(fd, ts); err != nil {
		rn.log.Debug("strictatime: could not set atime", "err", err)
	}
}

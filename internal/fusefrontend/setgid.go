package fusefrontend

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// checkSetgid applies the kernel's rule for chmod that the kernel itself
// only applies with default_permissions: a caller that is not in the
// file's group and lacks CAP_FSETID cannot set the setgid bit, which is
// then silently dropped from the requested mode (as on ext4). It
// changes in accordingly.
func (rn *RootNode) checkSetgid(ctx context.Context, f *file, e *entry, in *fuse.SetAttrIn) error {
	mode, ok := in.GetMode()
	if !ok || mode&syscall.S_ISGID == 0 {
		return nil
	}
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return nil
	}
	var st unix.Stat_t
	var err error
	if f != nil {
		err = syscallcompat.Fstat(f.cf.Fd(), &st)
	} else {
		err = syscallcompat.Fstatat(e.dirfd, e.cName, &st)
	}
	if err != nil {
		return err
	}
	if st.Mode&syscall.S_ISGID != 0 {
		return nil // already set: nothing is being granted
	}
	gid := st.Gid
	if g, ok := in.GetGID(); ok {
		gid = g // a chown in the same request: the new group counts
	}
	if callerInGroupOrFsetid(c.Pid, c.Gid, gid) {
		return nil
	}
	in.Mode &^= syscall.S_ISGID
	return nil
}

// callerInGroupOrFsetid reports whether the thread tid (whose fsgid the
// request carries) is in group gid or has CAP_FSETID, from
// /proc/<tid>/status. When that cannot be read, it answers true: the
// backing filesystem then decides, as before.
func callerInGroupOrFsetid(tid, fsgid, gid uint32) bool {
	if fsgid == gid {
		return true
	}
	ok := true
	found := procStatus(tid, func(key, val string) {
		switch key {
		case "Groups":
			ok = false
			for _, g := range strings.Fields(val) {
				if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) == gid {
					ok = true
					return
				}
			}
		case "CapEff":
			caps, err := strconv.ParseUint(val, 16, 64)
			if err != nil || caps&(1<<capFsetid) != 0 {
				ok = true
			}
		}
	})
	return !found || ok
}

// capFsetid is the bit of CAP_FSETID in the CapEff line of
// /proc/<tid>/status (Linux's capability numbering: the file is Linux's;
// elsewhere procStatus finds none).
const capFsetid = 4

// procStatus calls fn with each "Key: value" line of /proc/<tid>/status
// (value trimmed) and reports whether the file could be read. A thread ID
// names that thread's own credentials.
func procStatus(tid uint32, fn func(key, val string)) bool {
	f, err := os.Open("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok {
			fn(k, strings.TrimSpace(v))
		}
	}
	return s.Err() == nil
}

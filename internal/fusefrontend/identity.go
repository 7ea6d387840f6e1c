package fusefrontend

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// callerCred returns the identity new entries are created with: the
// caller's when running as root with AllowOther, else ok=false (create as
// ourselves; without allow_other every caller is the mounting user).
func (rn *RootNode) callerCred(ctx context.Context) (syscallcompat.Cred, bool) {
	if !rn.asRoot || !rn.args.AllowOther {
		return syscallcompat.Cred{}, false
	}
	c, ok := fuse.FromContext(ctx)
	if !ok {
		return syscallcompat.Cred{}, false
	}
	return syscallcompat.Cred{Uid: c.Uid, Gid: c.Gid, Groups: procGroups(c.Pid, c.Gid)}, true
}

// asCaller runs fn, which creates backing entries, with the caller's
// identity (see callerCred and syscallcompat.AsCaller), so that the kernel
// applies ownership, set-group-ID inheritance, permission, quota and root
// squashing rules as for the caller itself. Whatever fails, including the
// identity change, is an error for the caller.
//
// A caller whose identity is the daemon's own (root running tar as root)
// skips the switch, which would change nothing: about ten system calls,
// a goroutine and a locked thread per create. fn runs on that goroutine
// (syscallcompat.AsCaller), so it must not rely on running on the
// request's own goroutine.
func (rn *RootNode) asCaller(ctx context.Context, fn func() error) error {
	cred, ok := rn.callerCred(ctx)
	if !ok || rn.daemon.same(cred) {
		return fn()
	}
	return syscallcompat.AsCaller(cred, fn)
}

// daemonCred is the daemon's own filesystem identity, read once (it never
// changes: AsCaller changes it per thread and restores it).
type daemonCred struct {
	ok     bool // read; false makes same always false
	uid    uint32
	gid    uint32
	groups []uint32 // sorted
}

// readDaemonCred returns the calling process's identity.
func readDaemonCred() daemonCred {
	g, err := unix.Getgroups()
	if err != nil {
		return daemonCred{}
	}
	groups := make([]uint32, len(g))
	for i, v := range g {
		groups[i] = uint32(v)
	}
	slices.Sort(groups)
	return daemonCred{ok: true, uid: uint32(os.Geteuid()), gid: uint32(os.Getegid()), groups: groups}
}

// same reports whether switching to c would leave the thread's identity
// as it is: same fsuid, fsgid and set of supplementary groups.
func (d *daemonCred) same(c syscallcompat.Cred) bool {
	if !d.ok || c.Uid != d.uid || c.Gid != d.gid || len(c.Groups) != len(d.groups) {
		return false
	}
	g := slices.Clone(c.Groups)
	slices.Sort(g)
	return slices.Equal(g, d.groups)
}

// procGroups returns the supplementary groups of process pid from
// /proc/PID/status. FUSE requests carry only uid, gid and pid; when the pid
// is unknown (0: the caller lives in another pid namespace) or gone, the
// caller is taken to be in its primary group only.
func procGroups(pid uint32, gid uint32) []uint32 {
	fallback := []uint32{gid}
	if pid == 0 {
		return fallback
	}
	f, err := os.Open("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/status")
	if err != nil {
		return fallback
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		v, ok := strings.CutPrefix(s.Text(), "Groups:")
		if !ok {
			continue
		}
		var groups []uint32
		for _, g := range strings.Fields(v) {
			n, err := strconv.ParseUint(g, 10, 32)
			if err != nil {
				return fallback
			}
			groups = append(groups, uint32(n))
		}
		return groups
	}
	return fallback
}

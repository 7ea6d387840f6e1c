package repair

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/syscallcompat"
)

// ErrMounted is wrapped by CheckNotMounted's error when the CIPHERDIR is
// mounted.
var ErrMounted = errors.New("CIPHERDIR is mounted")

// CheckNotMounted fails with an error wrapping ErrMounted if the
// directory open at rootFd (CIPHERDIR, named cipherDir by the user) is in
// use by a mount or another process. Repair calls it on the descriptor it
// then works on, so that the directory checked is the one repaired. Repairing under a running mount would race with
// it. CIPHERDIR is identified by device and inode, not by its path, so
// that another path to it (a symlink, a bind mount, a relative path) does
// not hide a mount:
//
//   - every FUSE mount of /proc/self/mountinfo whose source is a path that
//     leads to CIPHERDIR's device and inode (both gocryptfs implementations
//     name their mounts after the CIPHERDIR they were given); sources below
//     another FUSE mount are compared as strings only, since a stat there
//     could hang on a dead daemon, and no stat may take longer than
//     sourceStatTimeout;
//   - every process (other than this one) holding a descriptor on
//     CIPHERDIR: our daemon keeps its root open for the whole mount, so
//     this also finds a mount with -fsname, one in another mount
//     namespace and one that has not finished starting. The inode behind
//     a descriptor is only stat'ed when /proc/PID/fdinfo places it on a
//     filesystem other than FUSE, for the same reason.
//
// Another -fsck or -repair of the same CIPHERDIR holds it open too, so
// two repairs never run at once (a race of their starts aside). Without
// root, only this user's processes can be inspected. A mount by
// the reference implementation with -fsname whose daemon holds no
// descriptor at that moment is not found: the kernel records nothing
// else that links a FUSE mount to its backing directory.
func CheckNotMounted(rootFd int, cipherDir string) error {
	return checkNotMounted(rootFd, cipherDir, "/proc", os.Getpid())
}

// checkNotMounted is CheckNotMounted with the proc filesystem at proc and
// self as the process to leave out.
func checkNotMounted(rootFd int, cipherDir, proc string, self int) error {
	var want unix.Stat_t
	if err := syscallcompat.Fstat(rootFd, &want); err != nil {
		return fmt.Errorf("stat %s: %w", cipherDir, err)
	}
	same := func(st *unix.Stat_t) bool { return st.Dev == want.Dev && st.Ino == want.Ino }
	mounts, err := mountinfo.Read()
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is mounted: %w", cipherDir, err)
	}
	names := map[string]bool{}
	if abs, err := filepath.Abs(cipherDir); err == nil {
		names[abs] = true
	}
	if real, err := filepath.EvalSymlinks(cipherDir); err == nil {
		names[real] = true
	}
	byID := map[int]mountinfo.Mount{}
	for _, m := range mounts {
		byID[m.ID] = m
	}
	// Set once a source's stat hung (a symlink into a dead FUSE mount):
	// the remaining sources are compared as strings only.
	hung := false
	for _, m := range mounts {
		if !isFUSE(m.FSType) || !filepath.IsAbs(m.Source) {
			continue
		}
		src := filepath.Clean(m.Source)
		if names[src] {
			return fmt.Errorf("%w on %s: unmount it first", ErrMounted, m.MountPoint)
		}
		if belowFUSE(src, mounts) || hung {
			continue
		}
		var st unix.Stat_t
		ok, timedOut := statWithin(src, &st, sourceStatTimeout)
		hung = hung || timedOut
		if ok && same(&st) {
			return fmt.Errorf("%w on %s (as %s): unmount it first", ErrMounted, m.MountPoint, m.Source)
		}
	}
	pids, err := os.ReadDir(proc)
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is mounted: %w", cipherDir, err)
	}
	for _, p := range pids {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		pdir := filepath.Join(proc, p.Name())
		fds, err := os.ReadDir(filepath.Join(pdir, "fd"))
		if err != nil {
			continue // gone, or not ours to inspect
		}
		var theirs map[int]mountinfo.Mount // the process's own mount namespace
		for _, fd := range fds {
			id, ok := fdMount(filepath.Join(pdir, "fdinfo", fd.Name()))
			if !ok {
				continue
			}
			m, known := byID[id]
			if !known {
				if theirs == nil {
					theirs = readMounts(filepath.Join(pdir, "mountinfo"))
				}
				m, known = theirs[id]
			}
			if !known || isFUSE(m.FSType) {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(filepath.Join(pdir, "fd", fd.Name()), &st) == nil && same(&st) {
				return fmt.Errorf("%w: process %d (%s) has it open; unmount it or end that process first",
					ErrMounted, pid, comm(pdir))
			}
		}
	}
	return nil
}

// sourceStatTimeout bounds the stat of one mount source. The source of a
// FUSE mount is chosen by whoever mounted it and may lead, through a
// symlink, into a FUSE mount whose daemon does not answer.
const sourceStatTimeout = 2 * time.Second

// statWithin stats p (following symlinks) unless that takes longer than
// d; a stat that hangs is left behind in its goroutine.
func statWithin(p string, st *unix.Stat_t, d time.Duration) (ok, timedOut bool) {
	type result struct {
		st  unix.Stat_t
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		r.err = unix.Stat(p, &r.st)
		ch <- r
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-ch:
		*st = r.st
		return r.err == nil, false
	case <-t.C:
		return false, true
	}
}

func isFUSE(fstype string) bool {
	return fstype == "fuse" || strings.HasPrefix(fstype, "fuse.") || fstype == "fuseblk"
}

// belowFUSE reports whether the path p lies below a FUSE mount point.
func belowFUSE(p string, mounts []mountinfo.Mount) bool {
	for _, m := range mounts {
		if isFUSE(m.FSType) && (p == m.MountPoint || strings.HasPrefix(p, strings.TrimSuffix(m.MountPoint, "/")+"/")) {
			return true
		}
	}
	return false
}

// fdMount returns the mnt_id of an fdinfo file.
func fdMount(fdinfo string) (int, bool) {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "mnt_id:"); ok {
			id, err := strconv.Atoi(strings.TrimSpace(v))
			return id, err == nil
		}
	}
	return 0, false
}

// readMounts reads a mountinfo file into a map by mount ID (empty, not
// nil, when it cannot be read).
func readMounts(path string) map[int]mountinfo.Mount {
	out := map[int]mountinfo.Mount{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	ms, _ := mountinfo.Parse(f)
	for _, m := range ms {
		out[m.ID] = m
	}
	return out
}

// comm returns a process's command name.
func comm(pdir string) string {
	b, _ := os.ReadFile(filepath.Join(pdir, "comm"))
	return strings.TrimSpace(string(b))
}

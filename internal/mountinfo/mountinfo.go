// Package mountinfo answers what lies below a CIPHERDIR, and around it: is
// a directory a mount point, of which filesystem type and source (the
// mount table), and what kind of filesystem holds a path (statfs magic
// numbers and mount options: local or network, whether byte-range locks
// reach other machines, whether closing a descriptor does anything). It is
// the one place that reads /proc/self/mountinfo, undoes its escapes and
// knows filesystem magic numbers; main, the FUSE frontend and server,
// repair and the test helpers ask it.
//
// The mount table:
//
//   - Read parses /proc/self/mountinfo, Parse any file of that format
//     (/proc/PID/mountinfo of another process), into Mounts in the
//     table's order: a mount stacked on another comes after it.
//   - IsMountPoint tells whether a directory is a mount point and returns
//     the topmost mount on it.
//   - Unescape undoes the kernel's octal escapes of mount points and
//     sources (also those of /proc/self/mounts).
//
// The filesystem (backing.go): Detect examines the filesystem holding a
// path; CloseIsNoop and IsFUSE answer from a statfs type alone, for
// callers that hold a descriptor; SyncFolder finds a sync tool's marker
// files around a directory.
//
// Contract: nothing here opens anything below CIPHERDIR. The paths used
// are the ones the caller gives (CIPHERDIR itself, a mount point) and
// /proc/self/mountinfo; only SyncFolder lists directories, CIPHERDIR and
// its parents, for names. Every call reads the table anew (mounts come
// and go); the package keeps no state, and all of it is safe for
// concurrent use.
//
// Platforms: the magic numbers and /proc are Linux's. Elsewhere the
// package builds, but Read fails, so no directory is a mount point, and
// statfs types do not match, so every filesystem counts as local and
// none as FUSE.
package mountinfo

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mount is one line of mountinfo (proc(5)).
type Mount struct {
	// ID is the mount's unique ID (the mnt_id of /proc/PID/fdinfo).
	ID int
	// MountPoint is the directory the filesystem is mounted on.
	MountPoint string
	// MountOptions are the per-mount options, e.g. "rw,nosuid,relatime".
	MountOptions string
	// FSType is the filesystem type, e.g. "fuse.gocryptfs".
	FSType string
	// Source is the mount source; gocryptfs uses the absolute CIPHERDIR.
	Source string
	// SuperOptions are the options of the filesystem (the superblock),
	// e.g. "rw,vers=3,nolock" for NFS.
	SuperOptions string
}

// maxLine is the longest mountinfo line read; long option lists of
// network filesystems can exceed bufio's default of 64 KiB.
const maxLine = 1 << 20

// Parse reads mountinfo lines ("id parent major:minor root MOUNTPOINT
// options [optional...] - TYPE SOURCE superoptions") from r, in order.
// Malformed lines are skipped; the error is that of reading r.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if m, ok := parseLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// parseLine parses one mountinfo line: up to " - " the fields of the
// mount, after it those of the filesystem.
func parseLine(line string) (Mount, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	pf, sf := strings.Fields(pre), strings.Fields(post)
	if !ok || len(pf) < 5 || len(sf) < 2 {
		return Mount{}, false
	}
	id, _ := strconv.Atoi(pf[0])
	m := Mount{ID: id, MountPoint: Unescape(pf[4]), FSType: sf[0], Source: Unescape(sf[1])}
	if len(pf) >= 6 {
		m.MountOptions = pf[5]
	}
	if len(sf) >= 3 {
		m.SuperOptions = sf[2]
	}
	return m, true
}

// Read parses /proc/self/mountinfo, the mount table of this process's
// mount namespace.
func Read() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Unescape undoes the kernel's octal escapes (\040 for a space, \011,
// \012, \134 for a backslash) in a field of mountinfo or
// /proc/self/mounts. Anything else, including an incomplete or invalid
// escape, stays as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// IsMountPoint reports whether dir (a cleaned absolute path with symlinks
// resolved) is a mount point in this mount namespace, and returns the
// topmost mount on it. Unlike comparing st_dev with the parent, this also
// sees bind mounts. If the table cannot be read, dir counts as no mount
// point.
func IsMountPoint(dir string) (Mount, bool) {
	mounts, err := Read()
	if err != nil {
		return Mount{}, false
	}
	return mountedAt(mounts, dir)
}

// mountedAt is IsMountPoint on the table mounts.
func mountedAt(mounts []Mount, dir string) (top Mount, ok bool) {
	for _, m := range mounts {
		if m.MountPoint == dir {
			top, ok = m, true // later ones are stacked on top
		}
	}
	return top, ok
}

// holding returns the mount of the table that holds path p (cleaned,
// absolute, symlinks resolved): the one with the longest mount point
// that is p or a parent of it, the topmost of those.
func holding(mounts []Mount, p string) (m Mount, ok bool) {
	best := -1
	for _, x := range mounts {
		mp := x.MountPoint
		if len(mp) < best || !(mp == "/" || p == mp || strings.HasPrefix(p, mp+"/")) {
			continue
		}
		best, m, ok = len(mp), x, true
	}
	return m, ok
}

// holdingPath is holding on the running system for a path as the user
// gave it: made absolute and, where possible, resolved.
func holdingPath(path string) (Mount, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Mount{}, false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	mounts, err := Read()
	if err != nil {
		return Mount{}, false
	}
	return holding(mounts, abs)
}

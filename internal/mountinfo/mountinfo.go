// Package mountinfo reads the mount table of /proc/self/mountinfo: which
// directories are mount points, of which filesystem type and source.
package mountinfo

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mount is one line of mountinfo.
type Mount struct {
	// MountPoint is the directory the filesystem is mounted on.
	MountPoint string
	// FSType is the filesystem type, e.g. "fuse.gocryptfs".
	FSType string
	// Source is the mount source; gocryptfs uses the absolute CIPHERDIR.
	Source string
	// ID is the mount's unique ID (the mnt_id of /proc/PID/fdinfo).
	ID int
}

// Parse reads mountinfo lines ("id parent major:minor root MOUNTPOINT
// options [optional...] - TYPE SOURCE superoptions") from r, in order
// (a mount stacked on another comes after it). Malformed lines are
// skipped.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if !ok || len(pf) < 5 || len(sf) < 2 {
			continue
		}
		id, _ := strconv.Atoi(pf[0])
		out = append(out, Mount{MountPoint: Unescape(pf[4]), FSType: sf[0], Source: Unescape(sf[1]), ID: id})
	}
	return out, sc.Err()
}

// Read parses /proc/self/mountinfo.
func Read() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Unescape undoes the kernel's octal escapes (\040 for a space, ...).
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

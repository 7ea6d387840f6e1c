package main

import (
	"os"
	"strconv"
	"strings"
)

// mountedAt reports whether dir (a cleaned absolute path with symlinks
// resolved) is the mount point of a mount, according to mountinfo (the
// contents of /proc/self/mountinfo), and that mount's filesystem type.
// Unlike comparing st_dev with the parent, this also sees bind mounts.
func mountedAt(mountinfo, dir string) (fstype string, ok bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent major:minor root MOUNTPOINT options [optional...] - TYPE source superopts
		pre, post, found := strings.Cut(line, " - ")
		fields := strings.Fields(pre)
		if !found || len(fields) < 5 || unescapeMountinfo(fields[4]) != dir {
			continue
		}
		fstype = strings.Fields(post + " ?")[0]
		ok = true // later lines are mounts stacked on top; keep the last
	}
	return fstype, ok
}

// unescapeMountinfo undoes the octal escapes (\040 for a space, ...) of
// a mountinfo path.
func unescapeMountinfo(s string) string {
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

// isMountPoint is mountedAt on the running system.
func isMountPoint(dir string) (fstype string, ok bool) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	return mountedAt(string(b), dir)
}

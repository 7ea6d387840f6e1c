package main

import "gocryptfs/internal/mountinfo"

// mountedAt reports whether dir (a cleaned absolute path with symlinks
// resolved) is the mount point of one of mounts, and that mount's
// filesystem type. Unlike comparing st_dev with the parent, this also sees
// bind mounts.
func mountedAt(mounts []mountinfo.Mount, dir string) (fstype string, ok bool) {
	for _, m := range mounts {
		if m.MountPoint == dir {
			fstype, ok = m.FSType, true // later ones are stacked on top
		}
	}
	return fstype, ok
}

// isMountPoint is mountedAt on the running system.
func isMountPoint(dir string) (fstype string, ok bool) {
	mounts, err := mountinfo.Read()
	if err != nil {
		return "", false
	}
	return mountedAt(mounts, dir)
}

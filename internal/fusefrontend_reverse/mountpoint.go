package fusefrontend_reverse

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MountPointOf returns the identity of the mount point path for
// Args.MountPoint. Call it before mounting: afterwards the path shows the
// view. Symlinks in path are resolved, as the mount does.
func MountPointOf(path string) (MountPointID, error) {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return MountPointID{}, fmt.Errorf("mount point %q: %w", path, err)
	}
	p, err = filepath.Abs(p)
	if err != nil {
		return MountPointID{}, fmt.Errorf("mount point %q: %w", path, err)
	}
	parent, name := filepath.Dir(p), filepath.Base(p)
	var st unix.Stat_t
	if err := unix.Stat(parent, &st); err != nil {
		return MountPointID{}, fmt.Errorf("parent of mount point %q: %w", path, err)
	}
	return MountPointID{ParentDev: uint64(st.Dev), ParentIno: st.Ino, Name: name}, nil
}

package testutil

import "golang.org/x/sys/unix"

// lazyUnmount detaches the mount on dir (MNT_DETACH).
func lazyUnmount(dir string) error {
	return unix.Unmount(dir, unix.MNT_DETACH)
}

// mountTmpfs mounts a tmpfs with options on dir.
func mountTmpfs(dir, options string) error {
	return unix.Mount("tmpfs", dir, "tmpfs", 0, options)
}

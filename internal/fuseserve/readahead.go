package fuseserve

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountinfo"
)

// bdiReadAheadPath returns the sysfs file that holds the readahead window
// of the FUSE mount on dir: /sys/class/bdi/MAJOR:MINOR/read_ahead_kb, named
// after the mount's device number (the kernel names a FUSE mount's
// backing_dev_info that way). dir must be the root of a FUSE mount: a
// mount made through /dev/fd/N (the mount point is then a file descriptor
// of /dev/fuse, not the mount) or a path that something else was mounted
// over must never lead to another device's window being changed.
func bdiReadAheadPath(dir string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", fmt.Errorf("stat %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		return "", fmt.Errorf("statfs %s: %w", dir, err)
	}
	if !mountinfo.IsFUSE(int64(sfs.Type)) {
		return "", fmt.Errorf("%s is not a FUSE mount (f_type %#x)", dir, sfs.Type)
	}
	dev := uint64(st.Dev)
	return fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(dev), unix.Minor(dev)), nil
}

// raiseReadAhead sets the readahead window of the FUSE mount on dir to kb
// KiB unless it is that large already. The window negotiated at FUSE INIT
// (max_readahead) is capped by the kernel at 128 KiB; only root can raise
// it afterwards, through sysfs. A larger window lets the kernel send
// streaming reads as fewer, larger READ requests (up to max_pages, 1 MiB
// with our MaxWrite) that are decrypted in parallel.
func raiseReadAhead(dir string, kb int) error {
	path, err := bdiReadAheadPath(dir)
	if err != nil {
		return err
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(cur))); err == nil && n >= kb {
		return nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(kb)), 0); err != nil {
		return err
	}
	return nil
}

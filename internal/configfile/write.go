package configfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Marshal returns the config as the reference writes it (docs/format.md 2.2):
// keys in struct order, one TAB per nesting level, `": "` separators,
// arrays one element per line, and a trailing newline.
func (cf *ConfFile) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(cf, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteFile validates the config and atomically replaces the file at
// Path() (docs/format.md 2.8): it creates `<path>.tmp` exclusively with mode
// 0400, writes and fsyncs it (falling back to a global sync(2) when the
// filesystem does not support fsync), and renames it over `<path>`.
//
// A pre-existing `<path>.tmp` makes it fail with an error wrapping
// fs.ErrExist, leaving both files untouched. On any later failure the
// temporary file it created is removed. All operations are relative to a
// descriptor of the parent directory, so the temporary file and the final
// rename are guaranteed to happen in the same directory.
func (cf *ConfFile) WriteFile() (err error) {
	if cf.path == "" {
		return ErrNoPath
	}
	if err := cf.Validate(); err != nil {
		return fmt.Errorf("refusing to write config: %w", err)
	}
	data, err := cf.Marshal()
	if err != nil {
		return err
	}
	dir, base := filepath.Split(cf.path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("config path %q names a directory", cf.path)
	}
	tmpBase := base + TmpSuffix
	tmpPath := cf.path + TmpSuffix

	dirfd, err := unix.Open(dir, dirOpenFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dirfd)

	fd, err := unix.Openat(dirfd, tmpBase, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, ConfFileMode)
	if err != nil {
		// Not ours (EEXIST) or never created: nothing to clean up.
		return fmt.Errorf("write config: %w", &os.PathError{Op: "create", Path: tmpPath, Err: err})
	}
	f := os.NewFile(uintptr(fd), tmpPath)
	defer func() {
		if err != nil {
			f.Close()
			unix.Unlinkat(dirfd, tmpBase, 0)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err = f.Sync(); err != nil {
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTSUP) {
			return fmt.Errorf("write config: fsync: %w", err)
		}
		// Some filesystems (e.g. some FUSE ones) have no fsync; a global
		// sync is the closest substitute.
		unix.Sync()
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write config: close %s: %w", tmpPath, err)
	}
	if err = unix.Renameat(dirfd, tmpBase, dirfd, base); err != nil {
		return fmt.Errorf("write config: %w", &os.LinkError{Op: "rename", Old: tmpPath, New: cf.path, Err: err})
	}
	return nil
}

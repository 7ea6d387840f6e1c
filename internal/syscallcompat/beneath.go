package syscallcompat

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpenDirPath opens the directory named by the user (CIPHERDIR itself, as
// given on the command line) for reading. Symlinks on that path are
// followed: it is the user's choice of directory. Everything below it is
// then reached through OpenDirBeneath or the *at helpers, which never
// follow a symlink. It is the one place where a directory is opened by a
// path string.
func OpenDirPath(path string) (int, error) {
	return RetryInt(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
}

// CheckRelPath fails with EINVAL unless rel is a relative, slash-separated
// path without empty, "." or ".." components (the empty path, meaning
// the base directory itself, is accepted) and without NUL bytes.
func CheckRelPath(rel string) error {
	if rel == "" {
		return nil
	}
	if strings.HasPrefix(rel, "/") || strings.IndexByte(rel, 0) >= 0 {
		return syscall.EINVAL
	}
	for c := range strings.SplitSeq(rel, "/") {
		if c == "" || c == "." || c == ".." {
			return syscall.EINVAL
		}
	}
	return nil
}

// OpenDirBeneath opens the directory rel (see CheckRelPath; "" is baseFd
// itself) below baseFd for reading without following a symlink anywhere
// on the way: openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the
// kernel has it (Linux 5.6), otherwise a component-wise O_NOFOLLOW walk
// (WalkDirs). A symlink on the path fails with ELOOP (as the last
// component, or in the walk, with ENOTDIR), a non-directory with ENOTDIR. The caller closes the returned fd.
func OpenDirBeneath(baseFd int, rel string) (int, error) {
	return openDirBeneath(baseFd, rel, true)
}

// Extent is a range [Off, Off+Len) of a file that holds data.
type Extent struct{ Off, Len int64 }

// DataExtents lists the data ranges of the first size bytes of the file
// open at fd with SEEK_DATA/SEEK_HOLE; what lies between them is a hole
// (reads as zeros, occupies no blocks). A filesystem without SEEK_DATA
// gives one extent covering everything.
func DataExtents(fd int, size int64) ([]Extent, error) {
	var out []Extent
	for off := int64(0); off < size; {
		data, err := Lseek(fd, off, unix.SEEK_DATA)
		if err == syscall.ENXIO {
			break // only a hole up to the end
		}
		if err == syscall.EINVAL && off == 0 {
			return []Extent{{0, size}}, nil
		}
		if err != nil {
			return nil, err
		}
		if data >= size {
			break
		}
		hole, err := Lseek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		hole = min(hole, size)
		if hole <= data {
			return nil, syscall.EIO
		}
		out = append(out, Extent{data, hole - data})
		off = hole
	}
	return out, nil
}

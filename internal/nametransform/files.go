package nametransform

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// readSmallFileAt reads the regular file name in dirfd into buf and returns
// how many bytes it got; a result of len(buf) means "at least that many", so
// callers pass one byte more than they accept. Anything but a regular file
// (a planted symlink, FIFO, device node, directory) fails with
// errNotRegular without being opened for I/O: syscallcompat.OpenFileAt pins
// the entry with O_PATH and checks its type first, so a FIFO's writer is
// never woken and a device driver's open routine never runs.
func readSmallFileAt(dirfd int, name string, buf []byte) (int, error) {
	fd, err := syscallcompat.OpenFileAt(dirfd, name, unix.O_RDONLY)
	switch {
	case err == unix.ELOOP || err == unix.EISDIR || err == unix.EINVAL:
		return 0, errNotRegular
	case err != nil:
		return 0, err
	}
	defer unix.Close(fd)
	return syscallcompat.ReadFull(fd, buf)
}

var errNotRegular = errors.New("not a regular file")

// writeNewFileAt creates name in dirfd exclusively with permission bits mode
// (independent of the umask), writes data and fsyncs it. On failure the file
// is removed again, unless it existed before (EEXIST is returned as is).
func writeNewFileAt(dirfd int, name string, data []byte, mode uint32) (err error) {
	fd, err := syscallcompat.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, mode)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			unix.Unlinkat(dirfd, name, 0)
		}
	}()
	if err := syscallcompat.WriteFull(fd, data); err != nil {
		return err
	}
	// The umask may have removed bits; the format wants exactly mode.
	if err := unix.Fchmod(fd, mode); err != nil {
		return err
	}
	return unix.Fsync(fd)
}

// ReadDirIVAt reads gocryptfs.diriv in the directory dirfd (without
// following symlinks). A file that is not regular (also a symlink), not
// exactly DirIVLen bytes or all zero fails with ErrBadDirIV (EIO); other open
// errors such as ENOENT are returned wrapped as they are.
func ReadDirIVAt(dirfd int) ([]byte, error) {
	return ReadDirIVFileAt(dirfd, DirIVFilename)
}

// ReadDirIVFileAt is ReadDirIVAt for an IV file with another name: a sync
// tool's conflict copy of gocryptfs.diriv.
func ReadDirIVFileAt(dirfd int, name string) ([]byte, error) {
	var buf [DirIVLen + 1]byte
	l, err := readSmallFileAt(dirfd, name, buf[:])
	switch {
	case err == errNotRegular:
		return nil, fmt.Errorf("%w: not a regular file", ErrBadDirIV)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", name, err)
	case l != DirIVLen:
		return nil, fmt.Errorf("%w: %d bytes instead of %d", ErrBadDirIV, l, DirIVLen)
	case allZero(buf[:DirIVLen]):
		return nil, fmt.Errorf("%w: all zero", ErrBadDirIV)
	}
	return append([]byte(nil), buf[:DirIVLen]...), nil
}

// WriteDirIVAt creates gocryptfs.diriv in the directory dirfd with 16 fresh
// random bytes (create-exclusive, mode 0444, fsynced) and returns them. It
// fails with EEXIST if the file exists; a partial file is removed again.
func WriteDirIVAt(dirfd int) ([]byte, error) {
	iv := make([]byte, DirIVLen)
	for {
		// crypto/rand never fails on Linux. All zero is reserved as invalid.
		rand.Read(iv)
		if !allZero(iv) {
			break
		}
	}
	if err := writeNewFileAt(dirfd, DirIVFilename, iv, 0o444); err != nil {
		return nil, fmt.Errorf("write %s: %w", DirIVFilename, err)
	}
	return iv, nil
}

// ReadLongNameAt returns the encrypted name stored in the companion file of
// the hashed name hashedName in the directory dirfd. Empty, oversized
// (> MaxNameFileLen) or non-regular files fail with ErrBadLongNameFile (EIO).
func ReadLongNameAt(dirfd int, hashedName string) (string, error) {
	if !IsLongContent(hashedName) {
		return "", fmt.Errorf("%q is not a hashed long name: %w", hashedName, ErrBadArgument)
	}
	var buf [MaxNameFileLen + 1]byte
	l, err := readSmallFileAt(dirfd, LongNameFilename(hashedName), buf[:])
	switch {
	case err == errNotRegular:
		return "", fmt.Errorf("%w: %s: not a regular file", ErrBadLongNameFile, hashedName)
	case err != nil:
		return "", fmt.Errorf("read long name %s: %w", hashedName, err)
	case l == 0 || l > MaxNameFileLen:
		return "", fmt.Errorf("%w: %s: %d bytes", ErrBadLongNameFile, hashedName, l)
	}
	return string(buf[:l]), nil
}

// WriteLongNameAt creates the companion file of hashedName in dirfd holding
// the encrypted name enc (create-exclusive, mode 0444, fsynced). hashedName
// must equal HashLongName(enc). An existing file with the same content is
// accepted (rename and link keep an existing one); different content fails
// with an error wrapping EEXIST.
func (n *NameTransform) WriteLongNameAt(dirfd int, hashedName, enc string) error {
	if len(enc) == 0 || len(enc) > MaxNameFileLen || n.HashLongName(enc) != hashedName {
		return fmt.Errorf("long name %q does not match its content: %w", hashedName, ErrBadArgument)
	}
	err := writeNewFileAt(dirfd, LongNameFilename(hashedName), []byte(enc), 0o444)
	if err == unix.EEXIST {
		old, rerr := ReadLongNameAt(dirfd, hashedName)
		if rerr == nil && old == enc {
			return nil
		}
		return fmt.Errorf("write long name %s: existing file differs: %w", hashedName, err)
	}
	if err != nil {
		return fmt.Errorf("write long name %s: %w", hashedName, err)
	}
	return nil
}

// DeleteLongNameAt removes the companion file of hashedName in dirfd.
func DeleteLongNameAt(dirfd int, hashedName string) error {
	if !IsLongContent(hashedName) {
		return fmt.Errorf("%q is not a hashed long name: %w", hashedName, ErrBadArgument)
	}
	if err := unix.Unlinkat(dirfd, LongNameFilename(hashedName), 0); err != nil {
		return fmt.Errorf("delete long name %s: %w", hashedName, err)
	}
	return nil
}

func allZero(b []byte) bool {
	var acc byte
	for _, x := range b {
		acc |= x
	}
	return acc == 0
}

package fusefrontend_reverse

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// entryKind says what a name in the view stands for.
type entryKind uint8

const (
	// entryPlain is a plaintext entry shown under its encrypted name.
	entryPlain entryKind = iota
	// entryDirIV is the virtual gocryptfs.diriv of the directory.
	entryDirIV
	// entryNameFile is the virtual .name companion of a hashed entry.
	entryNameFile
	// entryConfig is gocryptfs.conf in the root: the reverse config as
	// loaded at mount time (config.go).
	entryConfig
)

// resolved is the result of mapping one view name to PLAINDIR.
type resolved struct {
	kind entryKind
	// pName is the plaintext name in the directory: of the entry itself
	// (entryPlain), of the hashed entry (entryNameFile), or
	// ReverseConfName (entryConfig). Empty for entryDirIV.
	pName string
	// enc is the full encrypted name, the content of a .name file.
	enc string
}

// errNoEnt wraps ENOENT with the name that was not found.
func errNoEnt(format string, a ...any) error {
	return fmt.Errorf(format+": %w", append(a, syscall.ENOENT)...)
}

// resolveName maps name, as looked up in the view directory whose plaintext
// path is pDir and ciphertext path cDir, to what it shows. dirfd is that
// plaintext directory (needed to resolve hashed long names). boundary is set
// for a -one-file-system mount point, which shows nothing but its
// gocryptfs.diriv. The entry's existence and exclusion are checked by the
// caller.
func (rn *RootNode) resolveName(dirfd int, pDir, cDir, name string, boundary bool) (resolved, error) {
	nt := rn.nt
	isRoot := pDir == ""
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return resolved{}, errNoEnt("invalid name %q", name)
	}
	if nt.UsesDirIV() && name == nametransform.DirIVFilename {
		return resolved{kind: entryDirIV}, nil
	}
	if boundary {
		return resolved{}, errNoEnt("%q is below a mount point (-one-file-system)", name)
	}
	if isRoot && rn.mapsConfig() {
		switch name {
		case nametransform.ConfDefaultName:
			return resolved{kind: entryConfig, pName: ReverseConfName}, nil
		case rn.collisionName:
			return resolved{}, errNoEnt("name collision placeholder %q is not accessible", name)
		}
	}
	var pName string
	switch {
	case nt.PlaintextNames():
		pName = name
	case nametransform.IsLongNameFile(name):
		hashed := strings.TrimSuffix(name, nametransform.LongNameSuffix)
		p, enc, err := rn.findLongName(dirfd, cDir, hashed)
		if err != nil {
			return resolved{}, err
		}
		return resolved{kind: entryNameFile, pName: p, enc: enc}, nil
	case nametransform.IsLongContent(name):
		p, _, err := rn.findLongName(dirfd, cDir, name)
		if err != nil {
			return resolved{}, err
		}
		pName = p
	default:
		// A name that would be hashed is only reachable under its hash.
		if len(name) > nt.LongNameMax() {
			return resolved{}, errNoEnt("%q is longer than the long-name threshold", name)
		}
		p, err := nt.DecryptName(name, rn.dirIV(cDir))
		if err != nil {
			// Also covers the encrypted forms of "." and "..", which
			// DecryptName refuses.
			return resolved{}, errNoEnt("decrypt %q: %v", name, err)
		}
		pName = p
	}
	if isRoot && rn.mapsConfig() && pName == ReverseConfName {
		return resolved{}, errNoEnt("%s is only shown as %s", ReverseConfName, nametransform.ConfDefaultName)
	}
	return resolved{kind: entryPlain, pName: pName}, nil
}

// viewName returns the name under which the plaintext entry pName of the
// directory (pDir, cDir) is shown, the full encrypted name, and whether it
// is hashed (then a .name file accompanies it).
func (rn *RootNode) viewName(pDir, cDir, pName string) (stored, enc string, long bool, err error) {
	if pDir == "" && rn.mapsConfig() {
		switch pName {
		case ReverseConfName:
			return nametransform.ConfDefaultName, "", false, nil
		case nametransform.ConfDefaultName:
			if rn.nt.PlaintextNames() {
				return rn.collisionName, "", false, nil
			}
		}
	}
	enc, err = rn.nt.EncryptName(pName, rn.dirIV(cDir))
	if err != nil {
		return "", "", false, err
	}
	stored, long = rn.nt.HashIfLong(enc)
	if long {
		rn.cacheLongName(cDir, stored, pName)
	}
	return stored, enc, long, nil
}

// findLongName finds the plaintext entry of directory dirfd (ciphertext path
// cDir) whose hashed encrypted name is hashed, by encrypting the entries
// until one matches (docs/format.md 9.2). Results are cached. It returns the
// plaintext name and the full encrypted name.
func (rn *RootNode) findLongName(dirfd int, cDir, hashed string) (string, string, error) {
	iv := rn.dirIV(cDir)
	if p, ok := rn.cachedLongName(cDir, hashed); ok {
		var st unix.Stat_t
		if err := syscallcompat.Fstatat(dirfd, p, &st); err == nil {
			if enc, err := rn.nt.EncryptName(p, iv); err == nil && rn.nt.HashLongName(enc) == hashed {
				return p, enc, nil
			}
		}
	}
	fd, err := syscallcompat.OpenDirAt(dirfd, ".")
	if err != nil {
		return "", "", fmt.Errorf("list directory for %q: %w", hashed, err)
	}
	entries, err := syscallcompat.Getdents(fd)
	syscallcompat.Close(fd)
	if err != nil {
		return "", "", fmt.Errorf("list directory for %q: %w", hashed, err)
	}
	for _, e := range entries {
		enc, err := rn.nt.EncryptName(e.Name, iv)
		if err != nil {
			continue
		}
		stored, long := rn.nt.HashIfLong(enc)
		if !long {
			continue
		}
		rn.cacheLongName(cDir, stored, e.Name)
		if stored == hashed {
			return e.Name, enc, nil
		}
	}
	return "", "", errNoEnt("no entry hashes to %q", hashed)
}

// openDir opens the plaintext directory pDir ("" = root) without following
// symlinks on the way. The caller closes the fd.
func (rn *RootNode) openDir(pDir string) (int, error) {
	fd, err := syscallcompat.WalkDirs(rn.rootFd, pDir)
	if err != nil {
		return -1, fmt.Errorf("open plaintext dir %q: %w", pDir, err)
	}
	return fd, nil
}

// at runs fn with a directory fd holding the plaintext entry pPath and the
// entry's name in it; for the root ("") that is the root fd and ".".
func (rn *RootNode) at(pPath string, fn func(dirfd int, name string) error) error {
	if pPath == "" {
		return fn(rn.rootFd, ".")
	}
	dir, name := splitPath(pPath)
	fd, err := rn.openDir(dir)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(fd)
	return fn(fd, name)
}

// lstat stats the plaintext entry pPath without following symlinks.
func (rn *RootNode) lstat(pPath string, st *unix.Stat_t) error {
	return rn.at(pPath, func(dirfd int, name string) error {
		if err := syscallcompat.Fstatat(dirfd, name, st); err != nil {
			return fmt.Errorf("stat %q: %w", pPath, err)
		}
		return nil
	})
}

// boundary reports whether the directory with stat result st is a mount
// point that -one-file-system shows empty.
func (rn *RootNode) boundary(st *unix.Stat_t) bool {
	return rn.args.OneFileSystem && uint64(st.Dev) != rn.rootDev
}

// splitPath splits a relative path into its directory ("" for top-level
// entries) and last component.
func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

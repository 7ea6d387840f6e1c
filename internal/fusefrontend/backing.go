package fusefrontend

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// entry is a plaintext directory entry resolved to CIPHERDIR: an open fd of
// the backing parent directory and the backing name inside it. Every system
// call on the entry is made relative to dirfd, so nothing follows symlinks
// that someone may have placed in CIPHERDIR.
type entry struct {
	dirfd  int    // backing parent directory; released by close()
	dirIV  []byte // IV of that directory (nil without directory IVs)
	inRoot bool   // dirfd is the CIPHERDIR root (the entry is a child of it)
	name   string // plaintext name ("" for the root itself)
	cName  string // backing name; "." for the root itself
	// longEnc is the full encrypted name when cName is a hashed long name;
	// creators write it to the companion file, removers delete that file.
	longEnc string
	// ref, if set, is the reference dirfd belongs to (a shared, cached
	// fd that must not be closed directly); else dirfd is owned.
	ref *dirRef
	// longBase is set when cName is a sync tool's conflict copy of the
	// hashed long name longBase, whose companion file it shares.
	longBase string
	// st is the stat of the backing entry taken while resolving it, when
	// stOK; stat uses it instead of asking again within one operation.
	st   unix.Stat_t
	stOK bool
	// stErr, if set, is why the stat of cName taken while resolving the
	// entry failed (ENOENT: no entry of any name stands for it); stat
	// returns it instead of asking again, which saves a system call per
	// lookup of a missing name (every create and untar does one).
	stErr error
}

// stat stats the backing entry (its parent directory for the root).
func (e *entry) stat(st *unix.Stat_t) error {
	if e.stOK {
		*st = e.st
		return nil
	}
	if e.stErr != nil {
		return e.stErr
	}
	return syscallcompat.Fstatat(e.dirfd, e.cName, st)
}

func (e *entry) close() {
	if e.ref != nil {
		e.ref.release()
		e.ref = nil
		e.dirfd = -1
		return
	}
	if e.dirfd >= 0 {
		syscallcompat.Close(e.dirfd)
		e.dirfd = -1
	}
}

// isLong reports whether the entry is stored under a hashed long name.
func (e *entry) isLong() bool { return e.longEnc != "" }

// openDir opens the backing directory of the plaintext directory path
// relDir ("" is the root) and returns an fd that the caller owns and
// closes, with the directory's IV. Hot paths use openDirRef instead.
func (rn *RootNode) openDir(relDir string) (int, []byte, error) {
	ref, iv, err := rn.openDirRef(relDir)
	if err != nil {
		return -1, nil, err
	}
	defer ref.release()
	fd, err := syscallcompat.Dup(ref.fd)
	if err != nil {
		return -1, nil, err
	}
	return fd, iv, nil
}

// openDirRef returns a reference to an fd of the backing directory of the
// plaintext directory path relDir ("" is the root), found by walking from
// the root fd (or the longest cached ancestor) one component at a time,
// and the directory's IV. The caller releases the reference and must not
// close its fd.
func (rn *RootNode) openDirRef(relDir string) (*dirRef, []byte, error) {
	if ref, iv, ok := rn.dirCache.get(relDir); ok {
		return ref, iv, nil
	}
	gen := rn.dirCache.generation()
	// Start from the longest cached ancestor, else from the root.
	start := ""
	var ref *dirRef
	var iv []byte
	for p := relDir; p != ""; {
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			p = ""
		} else {
			p = p[:i]
		}
		if p == "" {
			break
		}
		if cref, civ, ok := rn.dirCache.get(p); ok {
			start, ref, iv = p, cref, civ
			break
		}
	}
	if ref == nil {
		var err error
		ref, iv, err = rn.rootDirRef()
		if err != nil {
			return nil, nil, err
		}
	}
	rest := strings.TrimPrefix(relDir[len(start):], "/")
	cur := start
	for comp := range strings.SplitSeq(rest, "/") {
		if comp == "" {
			continue
		}
		cName, _, err := rn.encryptName(comp, iv)
		if err != nil {
			ref.release()
			return nil, nil, err
		}
		next, err := syscallcompat.OpenDirAt(ref.fd, cName)
		if errors.Is(err, syscall.ENOENT) && !rn.nt.PlaintextNames() {
			// Maybe a directory shown under a conflict or
			// alternative-IV name.
			e := entry{dirfd: ref.fd, dirIV: iv, name: comp, cName: cName}
			rn.resolveConflict(&e)
			if e.cName != cName {
				next, err = syscallcompat.OpenDirAt(ref.fd, e.cName)
			}
		}
		ref.release()
		if err != nil {
			return nil, nil, err
		}
		ref = newDirRef(next)
		if cur == "" {
			cur = comp
		} else {
			cur += "/" + comp
		}
		iv, err = rn.readDirIV(ref.fd)
		if err != nil {
			ref.release()
			return nil, nil, rn.dirIVError(cur, err)
		}
		rn.dirCache.put(cur, ref, iv, gen)
	}
	return ref, iv, nil
}

// rootDirRef returns a reference to the root fd and the root directory's
// IV. The root fd lives as long as the RootNode, so no fd is duplicated;
// the IV is read once per cache period like that of any directory.
func (rn *RootNode) rootDirRef() (*dirRef, []byte, error) {
	if ref, iv, ok := rn.dirCache.get(""); ok {
		return ref, iv, nil
	}
	gen := rn.dirCache.generation()
	ref := rn.rootRef.acquire()
	iv, err := rn.readDirIV(ref.fd)
	if err != nil {
		ref.release()
		return nil, nil, rn.dirIVError("", err)
	}
	rn.dirCache.put("", ref, iv, gen)
	return ref, iv, nil
}

// dirIVError reports a directory whose IV cannot be read. The directory
// itself was just opened, so a missing gocryptfs.diriv is damage: EIO (with
// one warning per directory), not ENOENT.
func (rn *RootNode) dirIVError(relDir string, err error) error {
	if rn.firstWarn("diriv:" + relDir) {
		rn.log.Warn("cannot read directory IV", "dir", rn.cipherPath(relDir), "err", err)
	}
	if errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("%w: %w", syscall.EIO, err)
	}
	return err
}

// readDirIV returns the IV of the backing directory fd: read from its
// gocryptfs.diriv with directory IVs, 16 zero bytes with deterministic
// names, nil with plaintext names.
func (rn *RootNode) readDirIV(fd int) ([]byte, error) {
	switch {
	case rn.nt.PlaintextNames():
		return nil, nil
	case !rn.nt.UsesDirIV():
		return zeroIV, nil
	}
	return nametransform.ReadDirIVAt(fd)
}

var zeroIV = make([]byte, nametransform.DirIVLen)

// encryptName returns the backing name of plaintext name in a directory
// with IV iv, and the full encrypted name if the backing name is hashed.
// Names are remembered in rn.names (see nameMemo).
func (rn *RootNode) encryptName(name string, iv []byte) (cName, longEnc string, err error) {
	memo := !rn.nt.PlaintextNames() // nothing to save there
	if memo {
		if cName, longEnc, ok := rn.names.get(iv, name); ok {
			return cName, longEnc, nil
		}
	}
	enc, err := rn.nt.EncryptName(name, iv)
	if err != nil {
		return "", "", err
	}
	stored, long := rn.nt.HashIfLong(enc)
	if long {
		longEnc = enc
	}
	if memo {
		rn.names.put(iv, name, stored, longEnc)
	}
	return stored, longEnc, nil
}

// rememberListed puts a name that a listing decrypted into the memo, so
// that the requests that follow a listing for its entries (GETXATTR of
// "ls -l", LOOKUP, OPEN) need not encrypt it again. Only names stored
// unhashed under the main IV qualify: decryption is strict (every accepted
// name re-encrypts to itself), so cName is exactly what encryptName would
// compute.
func (rn *RootNode) rememberListed(iv []byte, name, cName string) {
	if rn.nt.PlaintextNames() || len(cName) > rn.nt.LongNameMax() || nametransform.IsLongContent(cName) {
		return
	}
	rn.names.put(iv, name, cName, "")
}

// child resolves the plaintext entry name inside the plaintext directory
// relDir. The caller must close the returned entry.
func (rn *RootNode) child(relDir, name string) (*entry, error) {
	e, err := rn.childRegular(relDir, name)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(name, nametransform.BadNameSuffix):
		rn.resolveBadName(e)
	case !rn.nt.PlaintextNames():
		rn.resolveConflict(e)
	}
	return e, nil
}

// childRegular is child without the fallbacks for -badname and conflict
// names, which cost a stat up front: an operation that succeeds on the
// regular name has found the entry that child would return, and can take
// child when it fails with ENOENT.
func (rn *RootNode) childRegular(relDir, name string) (*entry, error) {
	if len(name) > nametransform.NameMax {
		return nil, syscall.ENAMETOOLONG
	}
	ref, iv, err := rn.openDirRef(relDir)
	if err != nil {
		return nil, err
	}
	e := &entry{dirfd: ref.fd, ref: ref, dirIV: iv, inRoot: relDir == "", name: name}
	e.cName, e.longEnc, err = rn.encryptName(name, iv)
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// withEntry runs fn on the backing entry of the plaintext path p, trying
// the regular backing name first: fallbacks of child (-badname and sync
// conflict names) only apply when no entry of the regular name exists,
// and finding that out costs a stat up front. Only when fn fails with
// ENOENT is it run again on the entry that child resolves (if that is
// another one). fn must therefore fail without side effects on ENOENT.
func (rn *RootNode) withEntry(p string, fn func(e *entry) error) error {
	if p == "" {
		e, err := rn.resolve(p)
		if err != nil {
			return err
		}
		defer e.close()
		return fn(e)
	}
	dir, name := splitPath(p)
	e, err := rn.childRegular(dir, name)
	if err != nil {
		return err
	}
	regular := e.cName
	err = fn(e)
	e.close()
	if !errors.Is(err, syscall.ENOENT) {
		return err
	}
	if e, err = rn.child(dir, name); err != nil {
		return err
	}
	defer e.close()
	if e.cName == regular {
		return syscall.ENOENT
	}
	return fn(e)
}

// resolveBadName maps a name shown by -badname back to its backing entry,
// unless the regular encryption of the name exists. The displayed name
// must stand for exactly one existing backing entry; otherwise e is left
// alone (and will not be found).
func (rn *RootNode) resolveBadName(e *entry) {
	var st unix.Stat_t
	if syscallcompat.Fstatat(e.dirfd, e.cName, &st) == nil {
		return
	}
	found := ""
	for _, c := range rn.nt.BadNameCandidates(e.name, e.dirIV) {
		if c == found || syscallcompat.Fstatat(e.dirfd, c, &st) != nil {
			continue
		}
		if found != "" {
			return // ambiguous
		}
		found = c
	}
	if found != "" {
		e.cName, e.longEnc = found, ""
	}
}

// splitPath splits a relative plaintext path into directory and name.
func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// resolve returns the entry for the plaintext path p ("" is the root, whose
// entry has dirfd = a new root fd and cName ".").
func (rn *RootNode) resolve(p string) (*entry, error) {
	if p == "" {
		ref := rn.rootRef.acquire()
		return &entry{dirfd: ref.fd, ref: ref, cName: "."}, nil
	}
	dir, name := splitPath(p)
	return rn.child(dir, name)
}

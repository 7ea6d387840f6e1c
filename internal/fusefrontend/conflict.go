package fusefrontend

import (
	"errors"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/conflictname"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Sync tools' conflict copies and alternative directory IVs (see
// nametransform/conflict.go for what is shown how). Lookups mirror the
// listing: when the regular encryption of a name does not exist, every
// backing name that the listing could have shown under this name is
// computed and stat'ed; exactly one must exist. Everything created through
// the mount gets a regular name under the main IV, so a plaintext name
// that merely looks like a conflict copy round-trips as an ordinary name.

// altIVsIn reads the alternative IVs among ents, the entries of the
// backing directory dirfd. Unreadable copies are skipped with a warning.
func (rn *RootNode) altIVsIn(dirfd int, ents []syscallcompat.DirEntry) []nametransform.AltIV {
	if !rn.nt.UsesDirIV() {
		return nil
	}
	var names []string
	for _, de := range ents {
		if strings.HasPrefix(de.Name, "gocryptfs") {
			names = append(names, de.Name)
		}
	}
	ivs, bad := rn.nt.ReadAltIVsAt(dirfd, names)
	for n, err := range bad {
		rn.warnBadAltIV(n, err)
	}
	return ivs
}

// warnBadAltIV says once that the conflict copy name of gocryptfs.diriv
// is not a valid IV file (so names under it are not found).
func (rn *RootNode) warnBadAltIV(name string, err error) {
	if rn.firstWarn("altiv:" + name) {
		rn.log.Warn("unreadable conflict copy of the directory IV", "name", name, "err", err)
	}
}

// altIVCache remembers the alternative IVs of recently seen directories,
// keyed by backing inode and valid while the directory's mtime is
// unchanged (a new conflict copy changes it). It saves listing a
// directory on every lookup of a name that does not exist (which every
// create does).
type altIVCache struct {
	mu sync.Mutex
	m  map[[2]uint64]altIVCacheEntry
}

type altIVCacheEntry struct {
	mtime unix.Timespec
	ivs   []nametransform.AltIV
}

const altIVCacheSize = 1000

// altIVsAt returns the alternative IVs of the backing directory dirfd.
func (rn *RootNode) altIVsAt(dirfd int) []nametransform.AltIV {
	if !rn.nt.UsesDirIV() {
		return nil
	}
	var st unix.Stat_t
	if syscallcompat.Fstat(dirfd, &st) != nil {
		return nil
	}
	key := [2]uint64{uint64(st.Dev), st.Ino}
	c := &rn.altIVs
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.mtime == st.Mtim {
		return e.ivs
	}
	dfd, err := syscallcompat.OpenDirAt(dirfd, ".")
	if err != nil {
		return nil
	}
	defer syscallcompat.Close(dfd)
	ents, err := syscallcompat.Getdents(dfd)
	if err != nil {
		return nil
	}
	ivs := rn.altIVsIn(dfd, ents)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= altIVCacheSize {
		c.m = make(map[[2]uint64]altIVCacheEntry)
	}
	c.m[key] = altIVCacheEntry{mtime: st.Mtim, ivs: ivs}
	c.mu.Unlock()
	return ivs
}

// touchAltIVs records that the backing directory dirfd was just changed
// through this mount (which never creates IV copies), so that the next
// lookup there need not list it again. Bulk creation in one directory
// would otherwise list it once per file. Not with SharedStorage, where
// another mount may have added an IV copy at the same moment.
func (rn *RootNode) touchAltIVs(dirfd int) {
	if rn.args.SharedStorage || !rn.nt.UsesDirIV() {
		return
	}
	var st unix.Stat_t
	if syscallcompat.Fstat(dirfd, &st) != nil {
		return
	}
	key := [2]uint64{uint64(st.Dev), st.Ino}
	c := &rn.altIVs
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		e.mtime = st.Mtim
		c.m[key] = e
	}
}

// resolveConflict maps e.name to the backing entry that the listing shows
// under it, when the regular encryption e.cName does not exist: a name
// under an alternative IV (e.name being decorated with that IV's marker),
// or a conflict copy. It must stand for exactly one existing
// entry; otherwise e is left alone (and will not be found). A conflict
// copy of a long name shares the companion file of the original, so
// e.longEnc stays empty for it and e.longBase names the original.
func (rn *RootNode) resolveConflict(e *entry) {
	var st unix.Stat_t
	err := syscallcompat.Fstatat(e.dirfd, e.cName, &e.st)
	e.stOK = err == nil
	if !errors.Is(err, syscall.ENOENT) {
		return
	}
	parsed := conflictname.Parse(e.name)
	if len(parsed) == 0 {
		// Every candidate below is built from a reading of the name
		// as decorated; an undecorated name (every create looks one
		// up first) needs no look at the directory's IV copies.
		e.stErr = err
		return
	}
	type cand struct{ cName, longEnc, longBase string }
	var cands []cand
	add := func(plain string, iv []byte, m *conflictname.Marker) {
		enc, err := rn.nt.EncryptName(plain, iv)
		if err != nil {
			return
		}
		stored, long := rn.nt.HashIfLong(enc)
		switch {
		case m != nil && long:
			cands = append(cands, cand{cName: m.Apply(stored), longBase: stored})
		case m != nil:
			cands = append(cands, cand{cName: m.Apply(stored)})
		case long:
			cands = append(cands, cand{cName: stored, longEnc: enc})
		default:
			cands = append(cands, cand{cName: stored})
		}
	}
	alts := rn.altIVsAt(e.dirfd)
	for _, a := range alts {
		// A name under an alternative IV is only ever shown decorated
		// with its IV file's marker (nametransform/conflict.go), so the
		// undecorated name never leads to it.
		for _, c := range parsed {
			if c.Marker == a.Marker {
				add(c.Base, a.IV, nil)
			}
		}
	}
	for _, c := range parsed {
		for _, v := range nametransform.IVList(e.dirIV, alts) {
			add(c.Base, v, &c.Marker)
		}
	}
	var found *cand
	for i := range cands {
		c := &cands[i]
		if c.cName == e.cName || syscallcompat.Fstatat(e.dirfd, c.cName, &st) != nil {
			continue
		}
		if found != nil && found.cName != c.cName {
			return // ambiguous
		}
		found = c
	}
	if found != nil {
		e.cName, e.longEnc, e.longBase = found.cName, found.longEnc, found.longBase
		return
	}
	e.stErr = err
}

// longNameShared reports whether a conflict copy of the hashed long name
// cName still exists in dirfd: it needs the companion file of cName to
// decrypt, so that file must stay when cName itself goes away.
func (rn *RootNode) longNameShared(dirfd int, cName string) bool {
	dfd, err := syscallcompat.OpenDirAt(dirfd, ".")
	if err != nil {
		return true // unknown: keep the file
	}
	defer syscallcompat.Close(dfd)
	ents, err := syscallcompat.Getdents(dfd)
	if err != nil {
		return true
	}
	for _, de := range ents {
		if de.Name == cName || !strings.HasPrefix(de.Name, nametransform.LongNamePrefix) || nametransform.IsLongNameFile(de.Name) {
			continue
		}
		if _, ok := conflictname.BaseIs(de.Name, cName); ok {
			return true
		}
	}
	return false
}

// dropIVCopies removes the sync tools' conflict copies of internal files
// (gocryptfs.diriv, long-name companions) from the directory fd when
// nothing else but gocryptfs.diriv is in it (the directory is empty in the
// plaintext view, so no name uses them), and returns the remaining
// entries. Otherwise ents is returned unchanged.
func (rn *RootNode) dropIVCopies(fd int, ents []syscallcompat.DirEntry) ([]syscallcompat.DirEntry, error) {
	var copies []string
	var rest []syscallcompat.DirEntry
	for _, de := range ents {
		if de.Name != nametransform.DirIVFilename && rn.nt.IsHiddenConflict(de.Name, false) {
			copies = append(copies, de.Name)
			continue
		}
		rest = append(rest, de)
	}
	if len(copies) == 0 || len(rest) > 1 || len(rest) == 1 && rest[0].Name != nametransform.DirIVFilename {
		return ents, nil
	}
	for _, c := range copies {
		if err := syscallcompat.Unlinkat(fd, c, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
			return nil, err
		}
	}
	return rest, nil
}

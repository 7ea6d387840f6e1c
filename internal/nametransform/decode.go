package nametransform

import (
	"slices"
	"strings"

	"gocryptfs/internal/conflictname"
	"gocryptfs/internal/syscallcompat"
)

// Decoding a directory: what the plaintext view of one backing directory
// holds. The mount's listing, -fsck and -fsck -repair all read a
// directory through DecodeDir, so that they agree on every entry: which
// backing entries are the filesystem's own files, which names decrypt,
// which ones are shown decorated as sync conflict copies or under an
// alternative IV (conflict.go), which ones -badname shows, and which ones
// are hidden as undecryptable.

// Outcome says what a decoded listing made of one backing entry.
type Outcome uint8

const (
	// Shown: the name decrypted under the directory's own IV and is shown
	// as it is.
	Shown Outcome = iota
	// ShownConflict: shown under a decorated name, as a sync tool's
	// conflict copy of an entry or as a name under an alternative IV
	// (DecodedEntry.AltIV names that IV's file).
	ShownConflict
	// ShownBadName: undecryptable, shown because it matches a -badname
	// pattern (docs/format.md 6.9).
	ShownBadName
	// Undecryptable: not shown; DecodedEntry.Err says why the name did
	// not decrypt under the directory's own IV. Also an entry whose
	// decorated name (or -badname name) another entry already took.
	Undecryptable
	// Internal: one of the filesystem's own files (DecodedEntry.Kind says
	// which: gocryptfs.diriv, a long-name companion, gocryptfs.conf or
	// gocryptfs.quarantine in the root). Never shown.
	Internal
	// SyncToolFile: a sync tool's own file or its conflict copy of an
	// internal file (such as a readable alternative gocryptfs.diriv).
	// Never shown, and not damage.
	SyncToolFile
	// BadAltIV: a sync tool's conflict copy of gocryptfs.diriv that is not
	// a valid IV file (DecodedEntry.Err): never shown, and names encrypted
	// under it are not found.
	BadAltIV
)

// String returns a short name for logs.
func (o Outcome) String() string {
	switch o {
	case Shown:
		return "shown"
	case ShownConflict:
		return "shown-conflict"
	case ShownBadName:
		return "shown-badname"
	case Undecryptable:
		return "undecryptable"
	case Internal:
		return "internal"
	case SyncToolFile:
		return "sync-tool-file"
	case BadAltIV:
		return "bad-alt-iv"
	}
	return "outcome?"
}

// DecodedEntry is one backing entry of a decoded directory.
type DecodedEntry struct {
	// Backing is the entry as listed: its backing name (relative to the
	// directory), inode number and type.
	Backing syscallcompat.DirEntry
	// Kind is what Classify tells of the backing name.
	Kind Kind
	// Outcome says whether and how the entry is shown.
	Outcome Outcome
	// Name is the plaintext name the listing shows (shown outcomes only).
	Name string
	// AltIV is, for ShownConflict under an alternative IV, the backing
	// name of that IV's file (whoever holds the storage can plant one, so
	// reports name it; docs/threat-model.md).
	AltIV string
	// Err is, for Undecryptable and ShownBadName, the error of
	// decrypting the name under the directory's own IV (a permission
	// error when a long name's companion file cannot be read: -fsck then
	// skips the entry rather than calling it corrupt); for BadAltIV, why
	// the IV file is invalid.
	Err error
}

// DecodeDir decodes ents, the listing of the backing directory open at
// dirfd as syscallcompat.Getdents returned it, whose IV is iv (nil
// without directory IVs), and calls visit for every entry with what the
// plaintext view makes of it; isRoot is true for the CIPHERDIR root. "."
// and ".." are left out. The mount lists a directory with it, -fsck
// checks what it shows, -fsck -repair reads what a directory holds.
//
// Order: first every entry in the order of ents, except those whose name
// does not decrypt under iv and the invalid IV copies; then the invalid
// IV copies (BadAltIV), sorted by name; then the entries that did not
// decrypt, in the order of ents, each shown decorated, shown by -badname
// or Undecryptable. So a name that decrypts under the main IV always
// wins over a decorated name equal to it, and among the others the
// first in ents wins (callers that want a stable choice sort ents). Each
// entry is visited exactly once, and plaintext names of shown entries are
// unique, but for one forgery: a hashed long name whose companion file
// holds the encrypted name of another entry shows that name twice (a
// lookup finds the regular one).
//
// Long names' companion files and the alternative IV files are read
// relative to dirfd without following symlinks, only regular files (see
// ReadLongNameAt); nothing else is opened and dirfd's offset is not used.
// Names from getdents are single components (the kernel never returns a
// slash in one), so a hostile name cannot lead out of the directory. No
// name and no file content makes it fail or panic:
// whatever cannot be read or decrypted becomes an Undecryptable or
// BadAltIV entry. It is safe for concurrent use; visit runs on the
// caller's goroutine, one entry at a time, and may keep the entries.
func (n *NameTransform) DecodeDir(dirfd int, ents []syscallcompat.DirEntry, iv []byte, isRoot bool, visit func(DecodedEntry)) {
	alts, bad := n.altIVsIn(dirfd, ents)
	// A set, not a scan of bad per name: whoever holds the storage can
	// plant any number of invalid IV copies.
	var isBad map[string]bool
	if len(bad) > 0 {
		isBad = make(map[string]bool, len(bad))
		for _, b := range bad {
			isBad[b.Backing.Name] = true
		}
	}
	// Sized for the usual case that nearly every entry is shown.
	shown := make(map[string]bool, len(ents))
	var failed []DecodedEntry
	for _, de := range ents {
		d := DecodedEntry{Backing: de, Kind: n.Classify(de.Name, isRoot)}
		switch {
		case d.Kind == KindDot:
			continue
		case d.Kind.Hidden():
			d.Outcome = Internal
			visit(d)
			continue
		}
		name, err := n.DecryptNameAt(dirfd, de.Name, iv)
		if err == nil && n.preferAlt(dirfd, de.Name, name, alts) {
			err = ErrBadName
		}
		if err != nil {
			if n.IsHiddenConflict(de.Name, isRoot) || conflictname.IsToolFile(de.Name) {
				if !isBad[de.Name] {
					d.Outcome = SyncToolFile
					visit(d)
				}
				continue
			}
			d.Outcome, d.Err = Undecryptable, err
			failed = append(failed, d)
			continue
		}
		shown[name] = true
		d.Name = name
		visit(d)
	}
	for _, b := range bad {
		visit(b)
	}
	for _, d := range failed {
		name, alt, ok := n.displayConflictAt(dirfd, d.Backing.Name, iv, alts)
		if ok {
			d.Outcome = ShownConflict
			if alt >= 0 {
				d.AltIV = alts[alt].IVFileName()
			}
		} else {
			name, ok = n.displayBadName(d.Backing.Name, iv)
			d.Outcome = ShownBadName
		}
		if !ok || shown[name] {
			d.Outcome, d.AltIV = Undecryptable, ""
			visit(d)
			continue
		}
		shown[name] = true
		d.Name = name
		if d.Outcome == ShownConflict {
			d.Err = nil
		}
		visit(d)
	}
}

// NameEntries returns the backing names among ents that stand for
// entries of the plaintext directory, in the order of ents: those that
// DecodeDir tries to decrypt (everything but the filesystem's own files
// and "." and ".."). -fsck -repair needs them where nothing can be
// decoded, in a directory whose gocryptfs.diriv is lost.
func (n *NameTransform) NameEntries(ents []syscallcompat.DirEntry, isRoot bool) []string {
	var out []string
	for _, de := range ents {
		if k := n.Classify(de.Name, isRoot); !k.Hidden() && k != KindDot {
			out = append(out, de.Name)
		}
	}
	return out
}

// altIVsIn reads the alternative IVs among ents, the entries of the
// directory dirfd, sorted by marker (as ReadAltIVsAt); the copies that are
// not valid IV files come back as BadAltIV entries sorted by name.
func (n *NameTransform) altIVsIn(dirfd int, ents []syscallcompat.DirEntry) (ivs []AltIV, bad []DecodedEntry) {
	if !n.UsesDirIV() {
		return nil, nil
	}
	for _, de := range ents {
		a, ok, err := readAltIV(dirfd, de.Name)
		switch {
		case !ok:
		case err != nil:
			bad = append(bad, DecodedEntry{Backing: de, Kind: KindName, Outcome: BadAltIV, Err: err})
		default:
			ivs = append(ivs, a)
		}
	}
	sortAltIVs(ivs)
	slices.SortFunc(bad, func(a, b DecodedEntry) int { return strings.Compare(a.Backing.Name, b.Backing.Name) })
	return ivs, bad
}

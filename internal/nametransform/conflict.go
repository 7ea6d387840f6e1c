package nametransform

import (
	"slices"
	"strings"
	"unicode/utf8"

	"gocryptfs/internal/conflictname"
)

// Sync tools (Syncthing, Nextcloud, Dropbox, OneDrive, ...) resolve
// concurrent changes by renaming one side's file into a conflict copy,
// e.g. "<ciphertext name>.sync-conflict-20261202-120000-ABCDEFG", which
// does not decrypt. Such an entry is shown under its plaintext name
// decorated with the same marker, placed the way the tool would have
// placed it in the plaintext name (package conflictname):
// "report.sync-conflict-20261202-120000-ABCDEFG.txt".
//
// When one directory was created on two machines before they synced, it
// ends up with a conflict copy of gocryptfs.diriv and names encrypted with
// either IV. Each conflict copy of the IV file is an alternative IV (AltIV):
// names that do not decrypt under the main IV are tried under each one and
// are always shown decorated with the marker of their IV file, never under
// their own name. Whoever holds the storage can plant a copy of another
// directory's IV file (IV files are not secret) together with that
// directory's entries; decorating keeps those entries from passing for
// this directory's own (docs/threat-model.md, "Alternate directory IVs").
// Names that decrypt under the main IV are never affected by alternative
// IVs, except for preferAlt's invalid-UTF-8 case, which is then decorated
// too.

// AltIV is an alternative directory IV: the content of a sync tool's
// conflict copy of gocryptfs.diriv, with the marker that tool added.
type AltIV struct {
	Marker conflictname.Marker
	IV     []byte
}

// IsHiddenConflict reports whether the backing name is a conflict copy of
// an internal file (gocryptfs.diriv, a long-name companion, gocryptfs.conf
// in the root), which is never shown.
func (n *NameTransform) IsHiddenConflict(cName string, isRoot bool) bool {
	if n.plaintextNames || !strings.HasPrefix(cName, "gocryptfs") {
		return false
	}
	for _, c := range conflictname.Parse(cName) {
		if n.Classify(c.Base, isRoot).Hidden() {
			return true
		}
	}
	return false
}

// ReadAltIVsAt reads the alternative IVs among names, entries of the
// directory dirfd, sorted by marker so that the choice of shown names is
// stable. Copies that cannot be read are returned in bad with their
// errors. DecodeDir finds them the same way while it decodes a listing.
func (n *NameTransform) ReadAltIVsAt(dirfd int, names []string) (ivs []AltIV, bad map[string]error) {
	if !n.UsesDirIV() {
		return nil, nil
	}
	for _, name := range names {
		a, ok, err := readAltIV(dirfd, name)
		switch {
		case !ok:
		case err != nil:
			if bad == nil {
				bad = make(map[string]error)
			}
			bad[name] = err
		default:
			ivs = append(ivs, a)
		}
	}
	sortAltIVs(ivs)
	return ivs, bad
}

// readAltIV reads the entry name of the directory dirfd as an alternative
// IV; ok is false if name is not a conflict copy of gocryptfs.diriv, err
// set if it is one but not a valid IV file.
func readAltIV(dirfd int, name string) (a AltIV, ok bool, err error) {
	// Every tool keeps the extension ".diriv".
	if !strings.HasPrefix(name, "gocryptfs") || !strings.HasSuffix(name, ".diriv") || name == DirIVFilename {
		return AltIV{}, false, nil
	}
	m, ok := conflictname.BaseIs(name, DirIVFilename)
	if !ok {
		return AltIV{}, false, nil
	}
	iv, err := ReadDirIVFileAt(dirfd, name)
	if err != nil {
		return AltIV{}, true, err
	}
	return AltIV{Marker: m, IV: iv}, true, nil
}

// sortAltIVs sorts by marker, the order in which names are tried under
// them.
func sortAltIVs(ivs []AltIV) {
	slices.SortFunc(ivs, func(a, b AltIV) int { return strings.Compare(a.Marker.Text, b.Marker.Text) })
}

// displayConflictAt returns the name under which the backing entry cName
// of the directory dirfd is shown when it does not decrypt under the main
// IV iv: its name under an alternative IV decorated with that IV's marker,
// or a conflict copy of a name under any of the IVs (decorated with its
// own marker). alt is the index in alts of the alternative IV the name
// decrypted under, -1 for the main IV. ok is false when none applies or
// the result would be longer than NameMax.
func (n *NameTransform) displayConflictAt(dirfd int, cName string, iv []byte, alts []AltIV) (shown string, alt int, ok bool) {
	for i, a := range alts {
		plain, err := n.DecryptNameAt(dirfd, cName, a.IV)
		if err != nil {
			continue
		}
		shown := a.Marker.Apply(plain)
		return shown, i, len(shown) <= NameMax
	}
	for _, c := range conflictname.Parse(cName) {
		if IsLongNameFile(c.Base) {
			continue
		}
		for i, v := range IVList(iv, alts) {
			plain, err := n.DecryptNameAt(dirfd, c.Base, v)
			if err != nil {
				continue
			}
			shown := c.Marker.Apply(plain)
			return shown, i - 1, len(shown) <= NameMax
		}
	}
	return "", -1, false
}

// IVFileName returns the backing name of the conflict copy of
// gocryptfs.diriv that a holds.
func (a AltIV) IVFileName() string { return a.Marker.Apply(DirIVFilename) }

// IVList returns the main IV iv followed by the alternatives.
func IVList(iv []byte, alts []AltIV) [][]byte {
	out := make([][]byte, 0, 1+len(alts))
	out = append(out, iv)
	for _, a := range alts {
		out = append(out, a.IV)
	}
	return out
}

// preferAlt reports whether the entry cName, which decrypted under the main
// IV to plain, should rather be taken as a name under one of the
// alternative IVs. Names carry no authentication, so a name encrypted under
// another IV decrypts to a "valid" name under the main IV about once in a
// few hundred tries; such garbage is almost never valid UTF-8, while real
// names almost always are.
func (n *NameTransform) preferAlt(dirfd int, cName, plain string, alts []AltIV) bool {
	if len(alts) == 0 || utf8.ValidString(plain) {
		return false
	}
	for _, a := range alts {
		if p, err := n.DecryptNameAt(dirfd, cName, a.IV); err == nil && utf8.ValidString(p) {
			return true
		}
	}
	return false
}

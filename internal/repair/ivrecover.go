package repair

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// A directory IV that is damaged rather than gone can often be recovered:
// the names of the directory tell which candidate is right, since a name
// decrypts (valid padding, a valid UTF-8 name) under the right IV and
// practically never under a wrong one. The candidates are few and come
// from the damaged file itself, so whoever can write it gains nothing
// they could not get by writing a valid IV directly:
//
//   - a gocryptfs.diriv longer than 16 bytes (something appended): its
//     first 16 bytes;
//   - a gocryptfs.diriv of 16 bytes under which no name decrypts (a bit
//     flipped on the storage): each of the 128 IVs one bit away.
//
// A candidate is taken when a strict majority of the directory's entries
// decrypt under it (so a few junk entries do not prevent it); the
// entries that do not are then handled like any undecryptable name.

// maxDirIVFile bounds what is read of a damaged gocryptfs.diriv.
const maxDirIVFile = 4096

// encNames returns the encrypted names of the entries (for a hashed long
// name, the content of its .name file; "" when unreadable).
func (r *repairer) encNames(dfd int, entries []string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		if !r.nt.PlaintextNames() && nametransform.IsLongContent(e) {
			enc, err := nametransform.ReadLongNameAt(dfd, e)
			if err != nil {
				continue
			}
			out[i] = enc
			continue
		}
		out[i] = e
	}
	return out
}

// decryptsUnder counts the encrypted names that decrypt to a valid UTF-8
// name under iv, giving up once a majority is out of reach.
func (r *repairer) decryptsUnder(enc []string, iv []byte) int {
	n, failed := 0, 0
	for _, e := range enc {
		if e != "" {
			if plain, err := r.nt.DecryptName(e, iv); err == nil && utf8.ValidString(plain) {
				n++
				continue
			}
		}
		failed++
		if 2*failed >= len(enc) {
			return n
		}
	}
	return n
}

// majority reports whether n of total is a strict majority (and not 0).
func majority(n, total int) bool { return n > 0 && 2*n > total }

// readDirIVBytes reads up to maxDirIVFile bytes of the directory's
// gocryptfs.diriv (a regular file, never followed through a symlink).
func readDirIVBytes(dfd int) ([]byte, error) {
	fd, err := syscallcompat.OpenFileAt(dfd, nametransform.DirIVFilename, 0)
	if err != nil {
		return nil, err
	}
	defer syscallcompat.Close(fd)
	buf := make([]byte, maxDirIVFile)
	n, err := syscallcompat.ReadFull(fd, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// prefixIV returns the first 16 bytes of an over-long gocryptfs.diriv of
// the directory dfd if a majority of entries decrypt under them, and a
// note saying where the IV came from.
func (r *repairer) prefixIV(dfd int, entries []string) ([]byte, string) {
	raw, err := readDirIVBytes(dfd)
	// A file that fills the read buffer may be any size: not an IV with
	// a few bytes appended, and restoring it would copy all of it to
	// the quarantine.
	if err != nil || len(raw) <= nametransform.DirIVLen || len(raw) >= maxDirIVFile || allZero(raw[:nametransform.DirIVLen]) {
		return nil, ""
	}
	iv := raw[:nametransform.DirIVLen]
	if !majority(r.decryptsUnder(r.encNames(dfd, entries), iv), len(entries)) {
		return nil, ""
	}
	return iv, fmt.Sprintf("IV recovered from the first %d of the %d bytes of the damaged %s", nametransform.DirIVLen, len(raw), nametransform.DirIVFilename)
}

// flippedIV returns, for a directory whose IV is valid but under which
// no entry decrypts, the IV one bit away under which a majority does,
// and a note naming the bit.
func (r *repairer) flippedIV(dfd int, iv []byte, entries []string) ([]byte, string) {
	if len(entries) == 0 {
		return nil, ""
	}
	enc := r.encNames(dfd, entries)
	if r.decryptsUnder(enc, iv) > 0 {
		// The IV is right, and these names are damaged. Judged as
		// every candidate is (valid padding and UTF-8): padding
		// alone passes for about one name in 300 under a wrong IV,
		// which skipped the search for most large directories.
		return nil, ""
	}
	cand := make([]byte, len(iv))
	for bit := range 8 * len(iv) {
		copy(cand, iv)
		cand[bit/8] ^= 1 << (bit % 8)
		if allZero(cand) {
			continue
		}
		if majority(r.decryptsUnder(enc, cand), len(entries)) {
			return cand, fmt.Sprintf("IV recovered: bit %d of the damaged %s was flipped", bit, nametransform.DirIVFilename)
		}
	}
	return nil, ""
}

// dirEntries lists the entries of the directory dfd that hold names (see
// nameEntries).
func (r *repairer) dirEntries(dfd int, isRoot bool) ([]string, error) {
	ents, err := syscallcompat.Getdents(dfd)
	if err != nil {
		return nil, err
	}
	return r.nameEntries(ents, isRoot), nil
}

// nameEntries returns the sorted backing names among ents, a directory's
// listing, that stand for entries (nametransform.NameEntries), leaving
// out the filesystem's own file names in every directory, which repair
// never moves.
func (r *repairer) nameEntries(ents []syscallcompat.DirEntry, isRoot bool) []string {
	out := slices.DeleteFunc(r.nt.NameEntries(ents, isRoot), reservedName)
	slices.Sort(out)
	return out
}

// restoreDirIV replaces a damaged gocryptfs.diriv by the recovered iv:
// first a copy of the damaged one goes to the quarantine, then the new
// one replaces it in one rename, so that a crash leaves either the
// damaged IV (and a rerun recovers it again) or the recovered one.
func (r *repairer) restoreDirIV(cipherDir, plainDir string, iv []byte, note string) error {
	rel := join(cipherDir, nametransform.DirIVFilename)
	ev := Event{Action: "diriv-restored", Path: plainDir, CipherPath: rel, Error: note}
	if r.exists(rel) {
		q, err := r.quarantineCopy(rel)
		if err != nil {
			return err
		}
		ev.QuarantinedTo = q
	}
	if err := r.placeFile(rel, 0o444, writeBytes(iv)); err != nil {
		return err
	}
	return r.action(ev)
}

// fixFlippedIVs tries flippedIV on every directory (given by ciphertext
// and plaintext path) that holds undecryptable names.
func (r *repairer) fixFlippedIVs(dirs map[string]string) error {
	if !r.nt.UsesDirIV() {
		return nil
	}
	for _, cdir := range slices.Sorted(maps.Keys(dirs)) {
		// A directory that cannot be looked at here is left to the
		// usual handling of its names, which reports what fails.
		dfd, err := r.openDir(cdir)
		if err != nil {
			r.log.Debug("repair: IV recovery skipped", "dir", cdir, "err", err)
			continue
		}
		var cand []byte
		var note string
		iv, err := nametransform.ReadDirIVAt(dfd)
		var entries []string
		if err == nil {
			entries, err = r.dirEntries(dfd, cdir == "")
		}
		if err == nil {
			cand, note = r.flippedIV(dfd, iv, entries)
		} else {
			r.log.Debug("repair: IV recovery skipped", "dir", cdir, "err", err)
		}
		syscallcompat.Close(dfd)
		if cand == nil {
			continue
		}
		if err := r.restoreDirIV(cdir, dirs[cdir], cand, note); err != nil {
			return err
		}
		r.restored[cdir] = true
	}
	return nil
}

// staleName reports whether the undecryptable name found in cipherDir
// decrypts now, after this pass restored the directory's IV.
func (r *repairer) staleName(cipherDir, name string) bool {
	if !r.restored[cipherDir] {
		return false
	}
	dfd, err := r.openDir(cipherDir)
	if err != nil {
		return false
	}
	defer syscallcompat.Close(dfd)
	iv, err := nametransform.ReadDirIVAt(dfd)
	if err != nil {
		return false
	}
	plain, err := r.nt.DecryptNameAt(dfd, name, iv)
	return err == nil && utf8.ValidString(plain)
}

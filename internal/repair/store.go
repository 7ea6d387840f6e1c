package repair

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
)

// LostFoundName is the plaintext directory in the root that receives
// salvaged copies, one subdirectory per run.
const LostFoundName = "lost+found"

// journalSuffix names a run's journal next to its quarantine directory.
const journalSuffix = ".journal"

// record is one line of the journal.
type record struct {
	Op string `json:"op"` // "begin", "diriv", "action", "done"
	// Dir, Plain and Entries describe a directory whose IV is being
	// replaced ("diriv"): the entries still to move out.
	Dir     string   `json:"dir,omitempty"`
	Plain   string   `json:"plain,omitempty"`
	Entries []string `json:"entries,omitempty"`
	Event   *Event   `json:"event,omitempty"`
}

// abs returns the absolute path of a path relative to CIPHERDIR.
func (r *repairer) abs(rel string) string {
	return filepath.Join(r.opts.CipherDir, rel)
}

// step counts one mutating step and gives the test hook its chance.
func (r *repairer) step() {
	r.steps++
	if r.opts.AfterStep != nil {
		r.opts.AfterStep(r.steps)
	}
}

// fsyncDir makes a directory's entries durable.
func fsyncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// mkdirAll creates dir and its missing parents with mode 0700, fsyncing
// every parent that got a new entry.
func mkdirAll(dir string) error {
	if st, err := os.Lstat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: not a directory", dir)
		}
		return nil
	}
	if err := mkdirAll(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return fsyncDir(filepath.Dir(dir))
}

// writeFileSync writes data to path (created or truncated, permission bits
// mode) and fsyncs the file and its directory.
func writeFileSync(path string, mode os.FileMode, fill func(f *os.File) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, mode)
	if errors.Is(err, fs.ErrPermission) {
		// A read-only scratch file of ours, left by an interrupted run
		// (without root, O_TRUNC needs write permission).
		if os.Chmod(path, 0o600) == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|unix.O_NOFOLLOW, mode)
		}
	}
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return fsyncDir(filepath.Dir(path))
}

// tmpPath returns a scratch path in the quarantine for the final path
// dst (absolute): the same for every attempt, so that a rerun continues
// where a crash stopped, and on the same filesystem, so that rename
// moves it into place atomically. Nothing under a final name is ever
// half written.
func (r *repairer) tmpPath(dst string) (string, error) {
	dir := filepath.Join(r.quarantineRoot(), r.ts+".tmp")
	if err := mkdirAll(dir); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(dst))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])), nil
}

// placeFile writes a file under its scratch path and renames it to dst
// (absolute), replacing an earlier complete copy of ours, if any.
func (r *repairer) placeFile(dst string, mode os.FileMode, fill func(f *os.File) error) error {
	tmp, err := r.tmpPath(dst)
	if err != nil {
		return err
	}
	if err := writeFileSync(tmp, mode, fill); err != nil {
		return err
	}
	r.step()
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	r.step()
	if err := fsyncDir(filepath.Dir(tmp)); err != nil {
		return err
	}
	return fsyncDir(filepath.Dir(dst))
}

// placeNewFile is placeFile for a file that must not exist yet (a
// directory IV): an existing one is left alone and reported as EEXIST.
func (r *repairer) placeNewFile(dst string, mode os.FileMode, data []byte) error {
	tmp, err := r.tmpPath(dst)
	if err != nil {
		return err
	}
	if err := writeFileSync(tmp, mode, func(f *os.File) error { _, err := f.Write(data); return err }); err != nil {
		return err
	}
	r.step()
	return r.moveNew(tmp, dst)
}

// newDirIV returns 16 random bytes, never all zero.
func newDirIV() []byte {
	iv := make([]byte, nametransform.DirIVLen)
	for allZero(iv) {
		rand.Read(iv)
	}
	return iv
}

// quarantineRoot is the absolute path of gocryptfs.quarantine.
func (r *repairer) quarantineRoot() string {
	return r.abs(nametransform.QuarantineDirName)
}

// findUnfinished returns the timestamp of a run whose journal has no
// "done" record, and the journal's records.
func (r *repairer) findUnfinished() (string, []record, error) {
	ents, err := os.ReadDir(r.quarantineRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	for _, e := range ents {
		ts, ok := strings.CutSuffix(e.Name(), journalSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		recs, err := readJournal(filepath.Join(r.quarantineRoot(), e.Name()))
		if err != nil {
			return "", nil, err
		}
		if len(recs) == 0 || recs[len(recs)-1].Op != "done" {
			return ts, recs, nil
		}
	}
	return "", nil, nil
}

// readJournal parses a journal; a torn last line (crash while appending)
// is ignored.
func readJournal(path string) ([]record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var recs []record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		var rec record
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			recs = append(recs, rec)
		}
	}
	return recs, nil
}

// begin makes sure this run has its timestamp and journal before the
// first change. A timestamp already used by a finished run gets a suffix.
func (r *repairer) begin() error {
	if r.journal != nil {
		return nil
	}
	if err := mkdirAll(r.quarantineRoot()); err != nil {
		return err
	}
	if r.ts == "" {
		base := r.opts.Now().UTC().Format("20060102T150405Z")
		r.ts = base
		for i := 2; ; i++ {
			_, err1 := os.Lstat(filepath.Join(r.quarantineRoot(), r.ts))
			_, err2 := os.Lstat(filepath.Join(r.quarantineRoot(), r.ts+journalSuffix))
			if errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist) {
				break
			}
			r.ts = fmt.Sprintf("%s-%d", base, i)
		}
	}
	path := filepath.Join(r.quarantineRoot(), r.ts+journalSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	r.journal = f
	if err := fsyncDir(r.quarantineRoot()); err != nil {
		return err
	}
	return r.record(record{Op: "begin"})
}

// log appends a record to the journal and makes it durable.
func (r *repairer) record(rec record) error {
	if err := r.begin(); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := r.journal.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := r.journal.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	r.step()
	return nil
}

// finish marks the journal done.
func (r *repairer) finish() error {
	if r.journal == nil {
		return nil
	}
	// The scratch directory is empty after a complete run; only ours.
	os.Remove(filepath.Join(r.quarantineRoot(), r.ts+".tmp"))
	err := r.record(record{Op: "done"})
	if cerr := r.journal.Close(); err == nil {
		err = cerr
	}
	r.journal = nil
	return err
}

// quarantine moves the entry at cipherRel (relative to CIPHERDIR) to
// gocryptfs.quarantine/<ts>/<cipherRel> and returns the new relative
// path. An entry already gone whose quarantined copy exists counts as
// done (a rerun after a crash).
func (r *repairer) quarantine(cipherRel string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	dstRel := filepath.Join(nametransform.QuarantineDirName, r.ts, cipherRel)
	src, dst := r.abs(cipherRel), r.abs(dstRel)
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(dst); err == nil {
			return dstRel, nil
		}
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	if err := mkdirAll(filepath.Dir(dst)); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	// A second entry at the same path in one run (e.g. a file moved away
	// and a salvaged one put in its place, damaged again) gets a suffix:
	// rename must never replace an earlier original.
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dstRel = filepath.Join(nametransform.QuarantineDirName, r.ts, fmt.Sprintf("%s.%d", cipherRel, i))
		dst = r.abs(dstRel)
	}
	if err := r.moveNew(src, dst); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	return dstRel, nil
}

// moveNew renames src to dst (absolute paths on one filesystem), never
// replacing an existing dst, and makes both directories durable.
func (r *repairer) moveNew(src, dst string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("rename to %s: %w", dst, err)
	}
	r.step()
	if err := fsyncDir(filepath.Dir(src)); err != nil {
		return err
	}
	return fsyncDir(filepath.Dir(dst))
}

// quarantineCopy puts a copy of the file at cipherRel into the quarantine
// (for a file that is repaired in place) and returns its relative path.
func (r *repairer) quarantineCopy(cipherRel string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	dstRel := filepath.Join(nametransform.QuarantineDirName, r.ts, cipherRel)
	dst := r.abs(dstRel)
	if err := mkdirAll(filepath.Dir(dst)); err != nil {
		return "", err
	}
	data, err := os.ReadFile(r.abs(cipherRel))
	if err != nil {
		return "", err
	}
	// Written under a temporary name first: a crash must never leave a
	// partial copy under the final name, which a rerun would trust.
	tmp := dst + ".tmp"
	if err := writeFileSync(tmp, 0o400, func(f *os.File) error { _, err := f.Write(data); return err }); err != nil {
		return "", err
	}
	r.step()
	if err := os.Rename(tmp, dst); err != nil {
		return "", err
	}
	r.step()
	return dstRel, fsyncDir(filepath.Dir(dst))
}

// lfDir makes sure the plaintext directory lost+found/<ts>/<plainDir>
// exists and returns its ciphertext path relative to CIPHERDIR and its IV.
func (r *repairer) lfDir(plainDir string) (string, []byte, error) {
	if err := r.begin(); err != nil {
		return "", nil, err
	}
	comps := []string{LostFoundName, r.ts}
	if plainDir != "" {
		comps = append(comps, strings.Split(plainDir, "/")...)
	}
	cdir := ""
	iv, err := r.dirIV(cdir)
	if err != nil {
		return "", nil, err
	}
	for _, c := range comps {
		stored, err := r.storedName(cdir, c, iv)
		if err != nil {
			return "", nil, err
		}
		cdir = filepath.Join(cdir, stored)
		if err := r.placeDir(r.abs(cdir)); err != nil {
			return "", nil, err
		}
		if iv, err = r.dirIV(cdir); err != nil {
			return "", nil, err
		}
	}
	return cdir, iv, nil
}

// placeDir creates the encrypted directory dst (absolute) unless it
// exists: prepared with its IV under a scratch path, then renamed into
// place, so that it never exists without its IV.
func (r *repairer) placeDir(dst string) error {
	if st, err := os.Lstat(dst); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: not a directory", dst)
		}
		return nil
	}
	tmp, err := r.tmpPath(dst)
	if err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o700); err == nil {
		r.step()
	} else if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if r.nt.UsesDirIV() {
		ivPath := filepath.Join(tmp, nametransform.DirIVFilename)
		// A kill while writing it can leave it short: check the bytes.
		if iv, err := os.ReadFile(ivPath); err != nil || len(iv) != nametransform.DirIVLen || allZero(iv) {
			if err := writeFileSync(ivPath, 0o444, func(f *os.File) error { _, err := f.Write(newDirIV()); return err }); err != nil {
				return err
			}
			r.step()
		}
	}
	return r.moveNew(tmp, dst)
}

// dirIV reads the IV of a ciphertext directory (nil without directory IVs).
func (r *repairer) dirIV(cipherDir string) ([]byte, error) {
	if !r.nt.UsesDirIV() {
		return nil, nil
	}
	fd, err := unix.Open(r.abs(cipherDir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return nametransform.ReadDirIVAt(fd)
}

// storedName encrypts plain for the directory cipherDir with IV iv,
// writing the long-name companion file if the name is hashed.
func (r *repairer) storedName(cipherDir, plain string, iv []byte) (string, error) {
	enc, err := r.nt.EncryptName(plain, iv)
	if err != nil {
		return "", err
	}
	stored, long := r.nt.HashIfLong(enc)
	if long {
		fd, err := unix.Open(r.abs(cipherDir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		if old, err := nametransform.ReadLongNameAt(fd, stored); err != nil || old != enc {
			nf := r.abs(filepath.Join(cipherDir, nametransform.LongNameFilename(stored)))
			if err := r.placeFile(nf, 0o444, func(f *os.File) error { _, err := f.WriteString(enc); return err }); err != nil {
				return "", err
			}
		}
	}
	return stored, nil
}

// lfPath returns the ciphertext path (relative to CIPHERDIR) for the
// plaintext path lost+found/<ts>/<plainRel>, creating its directories.
func (r *repairer) lfPath(plainRel string) (string, error) {
	dir, base := filepath.Split(r.lfRel(plainRel))
	cdir, iv, err := r.lfDir(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return "", err
	}
	stored, err := r.storedName(cdir, base, iv)
	if err != nil {
		return "", err
	}
	return filepath.Join(cdir, stored), nil
}

// lfShown is how a salvaged item is named in reports.
func (r *repairer) lfShown(plainRel string) string {
	return filepath.Join(LostFoundName, r.ts, r.lfRel(plainRel))
}

// lfRel maps a plaintext path to its place below lost+found/<ts>. A path
// that is already there (damage inside a subtree this run copied) keeps
// its place instead of nesting lost+found/<ts>/lost+found/<ts>/...
func (r *repairer) lfRel(plainRel string) string {
	prefix := LostFoundName + "/" + r.ts + "/"
	if rest, ok := strings.CutPrefix(plainRel, prefix); ok {
		return rest
	}
	return plainRel
}

// salvageTree copies the ciphertext entry src (absolute) to dst verbatim
// (see copyTree). A directory is assembled under its scratch path and
// renamed into place when complete; an existing dst is such a complete
// copy from an earlier, interrupted run.
func (r *repairer) salvageTree(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return r.copyTree(src, dst)
	}
	tmp, err := r.tmpPath(dst)
	if err != nil {
		return err
	}
	if err := r.copyTree(src, tmp); err != nil {
		return err
	}
	return r.moveNew(tmp, dst)
}

// copyTree copies the ciphertext entry src (absolute) to dst verbatim:
// file contents, symlink targets, directories with everything in them
// (gocryptfs.diriv and .name files included, so the names inside stay
// valid), fifos and sockets. What an interrupted earlier attempt left at
// dst is completed or overwritten.
func (r *repairer) copyTree(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch mode := st.Mode(); {
	case mode.IsDir():
		if err := os.Mkdir(dst, mode.Perm()|0o700); err == nil {
			r.step()
		} else if !errors.Is(err, fs.ErrExist) {
			return err
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		slices.Sort(names)
		for _, n := range names {
			if err := r.copyTree(filepath.Join(src, n), filepath.Join(dst, n)); err != nil {
				return err
			}
		}
		if err := os.Chmod(dst, mode.Perm()); err != nil {
			return err
		}
		return fsyncDir(dst)
	case mode.IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		return r.placeFile(dst, mode.Perm(), func(f *os.File) error {
			_, err := f.ReadFrom(in)
			return err
		})
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if old, err := os.Readlink(dst); err == nil && old == target {
			return nil
		}
		os.Remove(dst) // our own partial copy, if any
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		r.step()
		return fsyncDir(filepath.Dir(dst))
	default:
		var sst unix.Stat_t
		if err := unix.Lstat(src, &sst); err != nil {
			return err
		}
		if err := unix.Mknod(dst, sst.Mode, int(sst.Rdev)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		r.step()
		return fsyncDir(filepath.Dir(dst))
	}
}

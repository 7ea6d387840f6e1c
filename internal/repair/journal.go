package repair

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// The journal (docs/format.md section 14.2) lives in CIPHERDIR, where
// anyone who can write the storage can plant or edit one. It is therefore
// authenticated with HMAC-SHA256 under a key derived from the master key
// (JournalKeyInfo), bound to its run's timestamp, and every name in it is
// checked to be one the repair itself could have written. A journal that
// fails either check is refused: Repair stops before changing anything
// and returns an error wrapping ErrJournal.

// JournalKeyInfo is the HKDF-SHA256 info string that derives the journal
// key (JournalKeyLen bytes) from the master key: cryptocore.HKDF(masterKey,
// JournalKeyInfo, JournalKeyLen). It is part of the on-disk format.
const JournalKeyInfo = "gocryptfs-go fsck -repair journal HMAC-SHA256"

// JournalKeyLen is the length of the journal key.
const JournalKeyLen = 32

// ErrJournal is wrapped by Repair's error when a journal in
// gocryptfs.quarantine is not one this filesystem's repair wrote.
var ErrJournal = errors.New("repair journal refused")

const (
	journalSuffix  = ".journal"
	journalVersion = 1
	// journalMACDomain starts the authenticated message.
	journalMACDomain = "gocryptfs-go repair journal v1\n"
	// journalMACPrefix starts the last line of the file.
	journalMACPrefix = "hmac-sha256 "
	// maxJournal bounds the size of a journal that is read.
	maxJournal = 64 << 20
	// maxEntries bounds the entries of one directory in a journal.
	maxEntries = 1 << 22
)

// tsRE matches a run's timestamp as begin makes it.
var tsRE = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z(-[0-9]{1,6})?$`)

// journal is the state of one run.
type journal struct {
	// Version is journalVersion.
	Version int `json:"version"`
	// State is "running" until the run completed, then "done".
	State string `json:"state"`
	// Dirs are the directories whose IV this run replaced, with the
	// entries named under the lost IV that go to lost+found.
	Dirs []dirIntent `json:"diriv_replaced,omitempty"`
}

// dirIntent is a directory whose IV is replaced: the entries (ciphertext
// names) still to move out to lost+found.
type dirIntent struct {
	// Dir is the directory's path relative to CIPHERDIR ("" is the root).
	Dir string `json:"dir"`
	// Plain is its plaintext path, which names its place in lost+found.
	Plain string `json:"plain"`
	// Entries are the ciphertext names of its entries.
	Entries []string `json:"entries"`
}

// journalMAC returns HMAC-SHA256(key, domain || ts || "\n" || body).
func journalMAC(key []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, journalMACDomain)
	io.WriteString(m, ts+"\n")
	m.Write(body)
	return m.Sum(nil)
}

// encodeJournal serializes j for the run ts: one line of JSON, then
// "hmac-sha256 <hex>".
func encodeJournal(key []byte, ts string, j *journal) ([]byte, error) {
	body, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(body)
	b.WriteString("\n" + journalMACPrefix)
	b.WriteString(hex.EncodeToString(journalMAC(key, ts, body)))
	b.WriteString("\n")
	return b.Bytes(), nil
}

// parseJournal authenticates and parses the journal of run ts. Nothing
// in data is used before the MAC checked out, and nothing after it that
// fails validJournal.
func parseJournal(key []byte, ts string, data []byte) (*journal, error) {
	if !tsRE.MatchString(ts) {
		return nil, fmt.Errorf("bad run name %q", ts)
	}
	if len(data) > maxJournal {
		return nil, fmt.Errorf("%d bytes, more than any journal", len(data))
	}
	rest, ok := bytes.CutSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(rest, '\n')
	if !ok || i < 0 {
		return nil, errors.New("not a journal (no authentication line)")
	}
	body, macLine := rest[:i], rest[i+1:]
	macHex, ok := bytes.CutPrefix(macLine, []byte(journalMACPrefix))
	if !ok {
		return nil, errors.New("not a journal (no authentication line)")
	}
	mac := make([]byte, sha256.Size)
	if n, err := hex.Decode(mac, macHex); err != nil || n != len(mac) || len(macHex) != 2*len(mac) {
		return nil, errors.New("malformed authentication tag")
	}
	if !hmac.Equal(mac, journalMAC(key, ts, body)) {
		return nil, errors.New("authentication failed: not written by -repair with this filesystem's master key, or modified since")
	}
	var j journal
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("malformed: %w", err)
	}
	if dec.More() {
		return nil, errors.New("malformed: trailing data")
	}
	if err := validJournal(&j); err != nil {
		return nil, err
	}
	return &j, nil
}

// validJournal checks that j holds only what the repair writes: a known
// version and state, directory paths of ciphertext names below CIPHERDIR,
// plaintext paths without "." or "..", and entries that are single
// ciphertext names which are not the filesystem's own files.
func validJournal(j *journal) error {
	if j.Version != journalVersion {
		return fmt.Errorf("unknown version %d", j.Version)
	}
	if j.State != "running" && j.State != "done" {
		return fmt.Errorf("unknown state %q", j.State)
	}
	for _, d := range j.Dirs {
		if !validPath(d.Dir, true) {
			return fmt.Errorf("bad directory %q", d.Dir)
		}
		if !validPath(d.Plain, false) {
			return fmt.Errorf("bad plaintext path %q", d.Plain)
		}
		if len(d.Entries) > maxEntries {
			return fmt.Errorf("directory %q: %d entries", d.Dir, len(d.Entries))
		}
		for _, e := range d.Entries {
			if !validComponent(e) || reservedName(e) {
				return fmt.Errorf("directory %q: bad entry %q", d.Dir, e)
			}
		}
	}
	return nil
}

// validComponent reports whether s is one path component: not empty, not
// "." or "..", without "/" or NUL, at most 255 bytes.
func validComponent(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.ContainsAny(s, "/\x00")
}

// validPath reports whether p is "" or valid components joined by "/";
// with cipher, no component may be one of the filesystem's own files.
func validPath(p string, cipher bool) bool {
	if p == "" {
		return true
	}
	for c := range strings.SplitSeq(p, "/") {
		if !validComponent(c) || cipher && reservedName(c) {
			return false
		}
	}
	return true
}

// reservedName reports whether a ciphertext name is one of the files a
// listing hides (config, IVs, long-name companions, the quarantine), which
// the repair never records as an entry or walks into.
func reservedName(s string) bool {
	return s == nametransform.ConfDefaultName || s == nametransform.DirIVFilename ||
		s == nametransform.QuarantineDirName || nametransform.IsLongNameFile(s)
}

// openQuarantine opens gocryptfs.quarantine (ENOENT if it does not exist).
func (r *repairer) openQuarantine() (int, error) {
	return syscallcompat.OpenDirAt(r.root, nametransform.QuarantineDirName)
}

// findUnfinished checks every journal and returns the timestamp and
// journal of a run that is not done (ts "" if none).
func (r *repairer) findUnfinished() (string, *journal, error) {
	qfd, err := r.openQuarantine()
	if errors.Is(err, syscall.ENOENT) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", nametransform.QuarantineDirName, err)
	}
	defer syscallcompat.Close(qfd)
	ents, err := syscallcompat.Getdents(qfd)
	if err != nil {
		return "", nil, err
	}
	var ts string
	var found *journal
	for _, e := range ents {
		if strings.HasSuffix(e.Name, journalSuffix+".tmp") {
			// The scratch file of a journal that a killed run never
			// renamed into place. Never needed: the journal it was
			// to replace is still in place and is resumed from, and
			// a run killed while writing its first journal had
			// changed nothing (changes wait for the journal). Only
			// one run works on a CIPHERDIR at a time, and unlinking
			// does not follow a planted symlink.
			if err := syscallcompat.Unlinkat(qfd, e.Name, 0); err != nil {
				r.log.Debug("repair: removing a journal's scratch file", "name", e.Name, "err", err)
			}
			continue
		}
		t, ok := strings.CutSuffix(e.Name, journalSuffix)
		if !ok {
			continue
		}
		j, err := r.readJournal(qfd, e.Name, t)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s/%s: %w; nothing was changed (inspect it and move it out of %s to go on)",
				ErrJournal, nametransform.QuarantineDirName, e.Name, err, nametransform.QuarantineDirName)
		}
		if j.State != "done" && (found == nil || t < ts) {
			ts, found = t, j
		}
	}
	return ts, found, nil
}

// readJournal reads and parses the journal name in qfd (regular files
// only: a FIFO planted there is never opened).
func (r *repairer) readJournal(qfd int, name, ts string) (*journal, error) {
	fd, err := syscallcompat.OpenFileAt(qfd, name, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscallcompat.Close(fd)
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size > maxJournal {
		return nil, fmt.Errorf("%d bytes, more than any journal", st.Size)
	}
	buf := make([]byte, st.Size+1)
	n, err := syscallcompat.PreadFull(fd, buf, 0)
	if err != nil {
		return nil, err
	}
	return parseJournal(r.opts.JournalKey, ts, buf[:n])
}

// writeJournal replaces the journal with the current state atomically
// (scratch file, fsync, rename, fsync of the directory).
func (r *repairer) writeJournal() error {
	data, err := encodeJournal(r.opts.JournalKey, r.ts, r.jr)
	if err != nil {
		return err
	}
	name := r.ts + journalSuffix
	tmp := name + ".tmp"
	if err := writeFileAt(r.qfd, tmp, 0o600, writeBytes(data)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := syscallcompat.Renameat2(r.qfd, tmp, r.qfd, name, 0); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := fsyncFd(r.qfd); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	r.step()
	return nil
}

// begin makes sure this run has its timestamp and journal before the
// first change. A timestamp already used by a finished run gets a suffix.
func (r *repairer) begin() error {
	if r.jr != nil {
		return nil
	}
	if r.qfd < 0 {
		fd, err := r.mkdirAll(nametransform.QuarantineDirName)
		if err != nil {
			return err
		}
		r.qfd = fd
	}
	if r.ts == "" {
		base := r.opts.Now().UTC().Format("20060102T150405Z")
		r.ts = base
		var st unix.Stat_t
		// Any entry of the run's names (also one planted there) means
		// the name is taken.
		for i := 2; syscallcompat.Fstatat(r.qfd, r.ts, &st) == nil ||
			syscallcompat.Fstatat(r.qfd, r.ts+journalSuffix, &st) == nil ||
			syscallcompat.Fstatat(r.qfd, r.ts+".tmp", &st) == nil; i++ {
			r.ts = fmt.Sprintf("%s-%d", base, i)
		}
	}
	r.jr = &journal{Version: journalVersion, State: "running"}
	return r.writeJournal()
}

// recordDir adds a directory whose IV is being replaced to the journal.
func (r *repairer) recordDir(d dirIntent) error {
	if err := r.begin(); err != nil {
		return err
	}
	r.jr.Dirs = append(r.jr.Dirs, d)
	return r.writeJournal()
}

// finish marks the journal done.
func (r *repairer) finish() error {
	if r.jr == nil {
		return nil
	}
	// The scratch directory is empty after a complete run; only ours.
	if r.tfd >= 0 {
		syscallcompat.Close(r.tfd)
		r.tfd = -1
	}
	syscallcompat.Unlinkat(r.qfd, r.ts+".tmp", unix.AT_REMOVEDIR)
	r.jr.State = "done"
	return r.writeJournal()
}

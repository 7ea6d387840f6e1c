// Package repair implements gocryptfs -fsck -repair: it brings a damaged
// forward-mode CIPHERDIR back to a state in which -fsck finds nothing,
// without ever deleting anything.
//
// Every ciphertext entry that is changed or taken out is first moved (or,
// when repaired in place, copied) to CIPHERDIR/gocryptfs.quarantine/<ts>/,
// keeping its path relative to CIPHERDIR. What can be saved is written as
// ordinary encrypted entries to lost+found/<ts>/ in the plaintext view,
// before the original is moved. <ts> is the UTC start time of the run.
//
// Every step is idempotent and durable before the next one starts (files
// and directories are fsynced), and a journal
// (gocryptfs.quarantine/<ts>.journal, docs/format.md 14.2) records the
// run: a rerun after a crash picks up the unfinished journal, reuses its
// timestamp and finishes the job, so that the final state is that of an
// uninterrupted run and no byte is lost in between.
//
// Nothing under CIPHERDIR is trusted, the journal included: it is
// authenticated with a key derived from the master key and its names are
// checked (journal.go), every file operation goes through descriptors
// opened below CIPHERDIR without following symlinks (store.go), FIFOs and
// device nodes are never opened, and a mounted CIPHERDIR is recognized by
// device and inode (mounted.go). Repair is not safe for concurrent use on
// one CIPHERDIR; a second run is refused while the first holds it open.
//
// Repair works in passes: check (internal/fsck), fix what was found,
// check again, until nothing is found or nothing more can be done (a fix
// can reveal more, e.g. the second name of a hard-linked file).
package repair

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Event is one line of the -json output: a finding, an action, or the
// summary.
type Event struct {
	// Type is "finding", "action" or "summary".
	Type string `json:"type"`
	// Kind classifies a finding (e.g. "corrupt-blocks", "diriv-missing").
	Kind string `json:"kind,omitempty"`
	// Path is the plaintext path ("" is the root; for undecryptable names
	// the directory holding them).
	Path string `json:"path,omitempty"`
	// CipherPath is the path relative to CIPHERDIR.
	CipherPath string `json:"cipher_path,omitempty"`
	// Action says what was done: "salvaged", "quarantined",
	// "header-rewritten", "diriv-restored", "diriv-recreated",
	// "xattr-removed".
	Action string `json:"action,omitempty"`
	// SalvagedTo is the plaintext path of the salvaged copy.
	SalvagedTo string `json:"salvaged_to,omitempty"`
	// QuarantinedTo is where the original went, relative to CIPHERDIR.
	QuarantinedTo string `json:"quarantined_to,omitempty"`
	// Ranges are the plaintext byte ranges lost.
	Ranges []Range `json:"lost_ranges,omitempty"`
	// NameLost is set for an entry whose own plaintext name cannot be
	// decrypted (its directory's IV is lost, or the name is damaged):
	// Path is then the directory holding it, and the salvaged copy is
	// named after the ciphertext name.
	NameLost bool `json:"name_lost,omitempty"`
	// Holds are, for a salvaged directory whose own name is lost, the
	// first plaintext names inside it (its own IV still decrypts them),
	// sorted; HoldsMore counts the others. They tell what it was.
	Holds     []string `json:"holds,omitempty"`
	HoldsMore int      `json:"holds_more,omitempty"`
	// Error is the finding's message.
	Error string `json:"error,omitempty"`
	// Line is the finding as plain -fsck prints it (not in the JSON).
	Line string `json:"-"`
	// Summary fields.
	Corrupt  *int  `json:"corrupt,omitempty"`
	Skipped  *int  `json:"skipped,omitempty"`
	Repaired *int  `json:"actions,omitempty"`
	Clean    *bool `json:"clean,omitempty"`
}

// Options configures Repair.
type Options struct {
	// CipherDir is the forward-mode ciphertext directory; Repair refuses
	// it while it is mounted (CheckNotMounted).
	CipherDir string
	// NameTransform and ContentEnc belong to the filesystem's master key.
	NameTransform *nametransform.NameTransform
	ContentEnc    *contentenc.ContentEnc
	// Report receives every finding and action as it happens.
	Report func(Event)
	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
	// Now gives the run's timestamp; nil means time.Now.
	Now func() time.Time
	// JournalKey authenticates the journal: JournalKeyLen bytes derived
	// from the master key with JournalKeyInfo. Repair does not keep it
	// beyond the call; the caller wipes it.
	JournalKey []byte
}

// Result summarizes a repair.
type Result struct {
	// Actions is the number of actions taken.
	Actions int
	// Final is the result of the last check.
	Final fsck.Result
}

// maxPasses bounds the check-and-fix loop; each pass needs a fix to
// continue, and a pass's fixes can only reveal entries one level down.
const maxPasses = 64

type repairer struct {
	ctx  context.Context
	opts Options
	nt   *nametransform.NameTransform
	ce   *contentenc.ContentEnc
	log  *slog.Logger
	// root is CIPHERDIR, qfd gocryptfs.quarantine and tfd the run's
	// scratch directory in it (-1 until needed).
	root, qfd, tfd int
	ts             string
	// jr is the run's journal once it began.
	jr      *journal
	actions int
	seen    map[string]bool
	// restored holds the directories (ciphertext paths) whose damaged IV
	// this run recovered (ivrecover.go).
	restored map[string]bool
}

// Repair checks and repairs the CIPHERDIR. The error is nil when the run
// completed (whether or not the result is clean: see Result.Final). An
// unfinished journal is resumed; a journal that does not authenticate or
// holds names the repair cannot have written stops the run before any
// change, with an error wrapping ErrJournal; a mounted CIPHERDIR one
// wrapping ErrMounted.
func Repair(ctx context.Context, opts Options) (res Result, err error) {
	if opts.NameTransform == nil || opts.ContentEnc == nil || opts.CipherDir == "" || len(opts.JournalKey) != JournalKeyLen {
		return Result{}, errors.New("repair: incomplete options")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &repairer{ctx: ctx, opts: opts, nt: opts.NameTransform, ce: opts.ContentEnc,
		log: opts.Logger, seen: map[string]bool{}, restored: map[string]bool{}, root: -1, qfd: -1, tfd: -1}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	// However the run ends (cancelled, failed), the caller learns how
	// many actions were taken before.
	defer func() { res.Actions = r.actions }()
	root, err := syscallcompat.OpenDirPath(opts.CipherDir)
	if err != nil {
		return Result{}, fmt.Errorf("repair: open %s: %w", opts.CipherDir, err)
	}
	r.root = root
	defer func() {
		for _, fd := range []int{r.tfd, r.qfd, r.root} {
			if fd >= 0 {
				syscallcompat.Close(fd)
			}
		}
	}()
	// Repairing under a running mount would race with it.
	if err := CheckNotMounted(r.root, opts.CipherDir); err != nil {
		return Result{}, fmt.Errorf("repair: %w", err)
	}
	ts, j, err := r.findUnfinished()
	if err != nil {
		return Result{}, fmt.Errorf("repair: %w", err)
	}
	if ts != "" {
		r.log.Debug("repair: resuming unfinished run", "ts", ts)
		if r.qfd, err = r.openQuarantine(); err != nil {
			return Result{}, fmt.Errorf("repair: %w", err)
		}
		r.ts, r.jr = ts, j
		for _, d := range j.Dirs {
			if err := r.moveOutEntries(d.Dir, d.Plain, d.Entries, true); err != nil {
				return Result{}, fmt.Errorf("repair: %w", err)
			}
		}
	}
	for pass := 0; ; pass++ {
		var probs []fsck.Problem
		final, err := fsck.Check(ctx, fsck.Options{
			CipherDir: opts.CipherDir, NameTransform: r.nt, ContentEnc: r.ce, Logger: r.log,
			Report: func(p fsck.Problem) { probs = append(probs, p) },
		})
		if err != nil {
			return res, err
		}
		res.Final = final
		for _, p := range probs {
			if k := strconv.Itoa(int(p.Kind)) + "\x00" + p.CipherPath + "\x00" + p.Name; !r.seen[k] {
				r.seen[k] = true
				r.emit(Describe(r.root, r.ce, p))
			}
		}
		if final.Clean() || pass == maxPasses {
			break
		}
		before := r.actions
		// Leftovers of an interrupted run inside its own lost+found come
		// last: the fixes of the originals complete them first, which
		// makes most of those findings stale.
		lf := r.currentLostFound()
		slices.SortStableFunc(probs, func(a, b fsck.Problem) int {
			return cmpBool(inDir(a.CipherPath, lf), inDir(b.CipherPath, lf))
		})
		// A directory whose every name fails may just have a damaged IV:
		// recovering it first keeps the names where they are.
		flipped := map[string]string{}
		for _, p := range probs {
			if p.Kind == fsck.CorruptName {
				dir, _ := split(p.CipherPath)
				flipped[dir] = p.Path
			}
		}
		if err := r.fixFlippedIVs(flipped); err != nil {
			return res, fmt.Errorf("repair: %w", err)
		}
		for _, p := range probs {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if err := r.fix(p); err != nil {
				return res, fmt.Errorf("repair %q: %w", p.CipherPath, err)
			}
		}
		if r.actions == before {
			break
		}
	}
	if err := r.finish(); err != nil {
		return res, fmt.Errorf("repair: %w", err)
	}
	return res, nil
}

// currentLostFound returns the ciphertext path of lost+found/<ts> of this
// run, or "" if it does not exist (yet).
func (r *repairer) currentLostFound() string {
	if r.ts == "" {
		return ""
	}
	cdir := ""
	for _, c := range []string{LostFoundName, r.ts} {
		iv, err := r.dirIV(cdir)
		if err != nil {
			return ""
		}
		enc, err := r.nt.EncryptName(c, iv)
		if err != nil {
			return ""
		}
		stored, _ := r.nt.HashIfLong(enc)
		cdir = join(cdir, stored)
	}
	return cdir
}

// inDir reports whether the relative path p is dir or below it.
func inDir(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, dir+"/"))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// emit hands an event to the caller.
func (r *repairer) emit(e Event) {
	if r.opts.Report != nil {
		r.opts.Report(e)
	}
}

// action counts and reports an action.
func (r *repairer) action(e Event) error {
	e.Type = "action"
	r.actions++
	r.emit(e)
	return nil
}

// fix repairs one finding; a finding made stale by an earlier fix (its
// entry is gone) is skipped.
func (r *repairer) fix(p fsck.Problem) error {
	if p.Kind != fsck.DirError && p.CipherPath != "" && !r.exists(p.CipherPath) {
		return nil
	}
	switch p.Kind {
	case fsck.CorruptName:
		dir, name := split(p.CipherPath)
		if r.staleName(dir, name) {
			return nil
		}
		return r.moveOut(dir, p.Path, name)
	case fsck.DirError:
		if p.Name == nametransform.DirIVFilename {
			return r.fixDirIV(p.CipherPath, p.Path)
		}
		if p.CipherPath == "" {
			return nil // the root cannot be quarantined
		}
		return r.quarantineOnly(p)
	case fsck.FileError:
		return r.fixFile(p)
	case fsck.OpenError, fsck.SymlinkError:
		return r.quarantineOnly(p)
	case fsck.OrphanLongName:
		if r.exists(strings.TrimSuffix(p.CipherPath, nametransform.LongNameSuffix)) {
			return nil // its entry was created meanwhile
		}
		return r.quarantineOnly(p)
	case fsck.XattrNameError, fsck.XattrValueError:
		return r.fixXattr(p)
	}
	// Skipped and XattrListError: nothing that can be done here.
	return nil
}

// quarantineOnly moves the entry (and its long-name file) out.
func (r *repairer) quarantineOnly(p fsck.Problem) error {
	q, err := r.quarantineEntry(p.CipherPath)
	if err != nil {
		return err
	}
	return r.action(Event{Action: "quarantined", Path: p.Path, CipherPath: p.CipherPath, QuarantinedTo: q})
}

// quarantineEntry quarantines an entry and, for a hashed long name, its
// companion file (after the entry: a crash in between leaves an orphan
// companion file, which the next pass quarantines too).
func (r *repairer) quarantineEntry(cipherRel string) (string, error) {
	q, err := r.quarantine(cipherRel)
	if err != nil {
		return "", err
	}
	if dir, base := split(cipherRel); !r.nt.PlaintextNames() && nametransform.IsLongContent(base) {
		nf := join(dir, nametransform.LongNameFilename(base))
		if r.exists(nf) {
			if _, err := r.quarantine(nf); err != nil {
				return "", err
			}
		}
	}
	return q, nil
}

// moveOut handles an entry of cipherDir whose name cannot be decrypted
// (plainDir is its directory's plaintext path): what it holds is saved to
// lost+found/<ts>/<plainDir>/<ciphertext name>, then it is quarantined.
// FIFOs, sockets and device nodes are only quarantined (moved, never
// opened) and reported.
func (r *repairer) moveOut(cipherDir, plainDir, name string) error {
	if !validComponent(name) {
		return fmt.Errorf("bad name %q: %w", name, syscall.EINVAL)
	}
	cipherRel := join(cipherDir, name)
	var st unix.Stat_t
	if err := r.lstat(cipherRel, &st); errors.Is(err, syscall.ENOENT) {
		return nil
	} else if err != nil {
		return err
	}
	plainRel := join(plainDir, name)
	ev := Event{Path: plainDir, CipherPath: cipherRel, NameLost: true}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		dst, ranges, err := r.salvageFile(cipherRel, plainRel)
		if err != nil {
			return err
		}
		if dst != "" {
			ev.SalvagedTo, ev.Ranges = r.lfShown(plainRel), ranges
		}
	case unix.S_IFLNK:
		target, err := r.readlink(cipherRel)
		if err != nil {
			return err
		}
		if _, err := r.nt.DecryptSymlinkTarget(target); err == nil {
			if err := r.salvageCopy(cipherRel, plainRel); err != nil {
				return err
			}
			ev.SalvagedTo = r.lfShown(plainRel)
		}
	case unix.S_IFDIR:
		// A directory keeps its own IV and names: the whole subtree is
		// copied as it is.
		if err := r.salvageCopy(cipherRel, plainRel); err != nil {
			return err
		}
		ev.SalvagedTo = r.lfShown(plainRel)
		ev.Holds, ev.HoldsMore = r.holds(cipherRel)
	default:
		ev.Error = specialNote(uint32(st.Mode))
	}
	q, err := r.quarantineEntry(cipherRel)
	if err != nil {
		return err
	}
	ev.QuarantinedTo = q
	ev.Action = "quarantined"
	if ev.SalvagedTo != "" {
		ev.Action = "salvaged"
	}
	return r.action(ev)
}

// maxHolds bounds the names Event.Holds lists.
const maxHolds = 5

// holds returns the first maxHolds plaintext names (sorted) in the
// ciphertext directory rel that decrypt under its own IV, and how many
// more there are; nothing when it cannot be read.
func (r *repairer) holds(rel string) ([]string, int) {
	fd, err := r.openDir(rel)
	if err != nil {
		return nil, 0
	}
	defer syscallcompat.Close(fd)
	var iv []byte
	if r.nt.UsesDirIV() {
		if iv, err = nametransform.ReadDirIVAt(fd); err != nil {
			return nil, 0
		}
	}
	ents, err := syscallcompat.Getdents(fd)
	if err != nil {
		return nil, 0
	}
	var names []string
	r.nt.DecodeDir(fd, ents, iv, rel == "", func(e nametransform.DecodedEntry) {
		if e.Outcome == nametransform.Shown && utf8.ValidString(e.Name) {
			names = append(names, e.Name)
		}
	})
	slices.Sort(names)
	if len(names) > maxHolds {
		return names[:maxHolds], len(names) - maxHolds
	}
	return names, 0
}

// readlink reads the symlink rel.
func (r *repairer) readlink(rel string) (string, error) {
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return "", err
	}
	defer syscallcompat.Close(dfd)
	return syscallcompat.Readlinkat(dfd, name)
}

// salvageCopy copies the ciphertext entry verbatim to lost+found.
func (r *repairer) salvageCopy(cipherRel, plainRel string) error {
	dst, err := r.lfPath(plainRel)
	if err != nil {
		return err
	}
	return r.salvageTree(cipherRel, dst)
}

// salvageFile writes what can be decrypted of the file at cipherRel to
// lost+found/<ts>/<plainRel> (plus <plainRel>.lost-ranges.txt when bytes
// are lost). It returns the ciphertext path of the copy ("" if nothing
// could be saved) and the lost ranges. Holes stay holes, and the free
// space is checked before anything is written.
func (r *repairer) salvageFile(cipherRel, plainRel string) (string, []Range, error) {
	fd, err := r.openFile(cipherRel, unix.O_RDONLY)
	if err != nil {
		return "", nil, err
	}
	f := os.NewFile(uintptr(fd), cipherRel)
	defer f.Close()
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return "", nil, err
	}
	d, err := Analyze(r.ce, f)
	if err != nil {
		return "", nil, err
	}
	ranges := d.LostRanges(r.ce)
	if !d.Salvageable() {
		return "", ranges, nil
	}
	if err := checkSpace(r.root, d.DataBytes); err != nil {
		return "", nil, fmt.Errorf("salvage %s: %w", cipherRel, err)
	}
	dst, err := r.lfPath(plainRel)
	if err != nil {
		return "", nil, err
	}
	if len(ranges) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Byte ranges of %q that could not be recovered (start-end, end exclusive):\n", r.lfRel(plainRel))
		for _, rg := range ranges {
			fmt.Fprintf(&b, "%d-%d (%d bytes): %s\n", rg.Start, rg.End, rg.End-rg.Start, rg.Reason)
		}
		rdst, err := r.lfPath(plainRel + ".lost-ranges.txt")
		if err != nil {
			return "", nil, err
		}
		ct := encryptContent(r.ce, []byte(b.String()))
		if err := r.placeFile(rdst, 0o600, writeBytes(ct)); err != nil {
			return "", nil, err
		}
	}
	// The data last: placing it can end the finding (a damaged copy in
	// lost+found repaired in place), so the ranges must exist by then.
	if err := r.placeFile(dst, uint32(st.Mode)&0o7777, func(w int) error {
		return writeSalvaged(r.ce, d, f, w)
	}); err != nil {
		return "", nil, err
	}
	return dst, ranges, nil
}

// fixFile repairs a regular file whose contents do not decrypt.
func (r *repairer) fixFile(p fsck.Problem) error {
	fd, err := r.openFile(p.CipherPath, unix.O_RDONLY)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), p.CipherPath)
	d, err := Analyze(r.ce, f)
	f.Close()
	if err != nil {
		return err
	}
	if d.Clean() {
		return nil // rewritten meanwhile
	}
	if d.OnlyVersion() {
		q, err := r.quarantineCopy(p.CipherPath)
		if err != nil {
			return err
		}
		if err := r.rewriteHeader(p.CipherPath, d.Header); err != nil {
			return err
		}
		r.step()
		return r.action(Event{Action: "header-rewritten", Path: p.Path, CipherPath: p.CipherPath, QuarantinedTo: q})
	}
	ev := Event{Path: p.Path, CipherPath: p.CipherPath}
	dst, ranges, err := r.salvageFile(p.CipherPath, p.Path)
	if err != nil {
		return err
	}
	ev.Ranges = ranges
	ev.Action = "quarantined"
	if dst != "" {
		ev.Action, ev.SalvagedTo = "salvaged", r.lfShown(p.Path)
	}
	if dst == p.CipherPath {
		// A damaged file in a subtree this run copied to lost+found was
		// replaced by its salvaged version; the original of the copy is
		// already in the quarantine.
		return r.action(ev)
	}
	if ev.QuarantinedTo, err = r.quarantineEntry(p.CipherPath); err != nil {
		return err
	}
	return r.action(ev)
}

// rewriteHeader writes a repaired header over the first 18 bytes.
func (r *repairer) rewriteHeader(rel string, h contentenc.FileHeader) error {
	fd, err := r.openFile(rel, unix.O_WRONLY)
	if err != nil {
		return err
	}
	err = syscallcompat.PwriteFull(fd, h.Pack(), 0)
	if err == nil {
		err = fsyncFd(fd)
	}
	if cerr := syscallcompat.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// fixXattr saves an undecryptable extended attribute's stored value to
// the quarantine (<cipher path>.xattr.<stored name>) and removes it.
func (r *repairer) fixXattr(p fsck.Problem) error {
	var fd int
	var err error
	if p.CipherPath == "" {
		fd, err = syscallcompat.OpenDirAt(r.root, ".")
	} else {
		dfd, name, err2 := r.openParent(p.CipherPath)
		if err2 != nil {
			return err2
		}
		// An O_PATH handle: nothing is opened for I/O (no FIFO open, no
		// device driver), and the xattr calls act on exactly this inode.
		fd, err = syscallcompat.OpenPathAt(dfd, name)
		syscallcompat.Close(dfd)
	}
	if err != nil {
		return err
	}
	defer syscallcompat.Close(fd)
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return err
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
		return nil // swapped for something else since the check
	}
	stored := p.Name
	if p.Kind == fsck.XattrValueError {
		// p.Name is the decrypted name; find the stored one.
		enc, err := r.nt.EncryptXattrName(p.Name)
		if err != nil {
			return err
		}
		stored = enc
	}
	val, err := syscallcompat.FgetxattrAll(fd, stored)
	if errors.Is(err, syscallcompat.NoAttr) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.begin(); err != nil {
		return err
	}
	dir, base := split(p.CipherPath)
	qDir := join(nametransform.QuarantineDirName+"/"+r.ts, dir)
	qName := base + ".xattr." + stored
	if p.CipherPath == "" {
		qName = ".xattr." + stored
	}
	if !validComponent(qName) {
		qName = tmpName(qName) + ".xattr"
	}
	qfd, err := r.mkdirAll(qDir)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(qfd)
	if err := r.placeFileAt(qfd, qName, join(qDir, qName), 0o400, writeBytes(val)); err != nil {
		return err
	}
	if err := syscallcompat.Fremovexattr(fd, stored); err != nil {
		return err
	}
	r.step()
	return r.action(Event{Action: "xattr-removed", Path: p.Path, CipherPath: p.CipherPath, QuarantinedTo: join(qDir, qName)})
}

// fixDirIV repairs a directory whose gocryptfs.diriv is missing or
// invalid: with an alternative IV (a sync tool's conflict copy of it, as
// nametransform recognizes them) that decrypts its names, that IV is
// restored and nothing moves; the same when the damaged file still holds
// the IV (ivrecover.go); otherwise a new IV is written and every
// entry named under the lost one goes to lost+found.
func (r *repairer) fixDirIV(cipherDir, plainDir string) error {
	if _, err := r.dirIV(cipherDir); err == nil {
		return nil // repaired meanwhile (e.g. created by this run)
	}
	dfd, err := r.openDir(cipherDir)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	ents, err := syscallcompat.Getdents(dfd)
	if err != nil {
		return err
	}
	entries := r.nameEntries(ents, cipherDir == "")
	if iv, note := r.prefixIV(dfd, entries); iv != nil {
		return r.restoreDirIV(cipherDir, plainDir, iv, note)
	}
	if iv, alt := r.bestAltIV(dfd, ents, entries); iv != nil {
		if err := r.replaceDirIV(cipherDir, iv); err != nil {
			return err
		}
		return r.action(Event{Action: "diriv-restored", Path: plainDir, CipherPath: join(cipherDir, nametransform.DirIVFilename),
			Error: "IV taken from " + alt})
	}
	// The intent goes to the journal before the new IV exists: after a
	// crash, a rerun must still know which names were encrypted under the
	// lost IV (with the new one, a few might decrypt to garbage).
	if err := r.recordDir(dirIntent{Dir: cipherDir, Plain: plainDir, Entries: entries}); err != nil {
		return err
	}
	if err := r.replaceDirIV(cipherDir, nil); err != nil {
		return err
	}
	if err := r.action(Event{Action: "diriv-recreated", Path: plainDir, CipherPath: join(cipherDir, nametransform.DirIVFilename)}); err != nil {
		return err
	}
	return r.moveOutEntries(cipherDir, plainDir, entries, false)
}

// moveOutEntries moves the listed entries of a directory whose IV was
// replaced out to lost+found (those still there). resumed says the list
// comes from the journal of an interrupted run: an entry whose name is a
// valid UTF-8 name under the directory's current IV then stays (a name
// created under the new IV since, should an old journal be put back).
func (r *repairer) moveOutEntries(cipherDir, plainDir string, entries []string, resumed bool) error {
	iv, err := r.dirIV(cipherDir)
	if err != nil {
		return nil // the IV is not written yet: the next check handles it
	}
	var dfd int = -1
	if resumed {
		if dfd, err = r.openDir(cipherDir); err != nil {
			return nil
		}
		defer syscallcompat.Close(dfd)
	}
	for _, n := range entries {
		if resumed {
			if plain, err := r.nt.DecryptNameAt(dfd, n, iv); err == nil && utf8.ValidString(plain) {
				continue
			}
		}
		if err := r.moveOut(cipherDir, plainDir, n); err != nil {
			return err
		}
	}
	return nil
}

// bestAltIV tries the alternative IV files among ents, the listing of
// the directory dfd, and returns the content of the one under which most
// entries decrypt (at least one, unless there are no entries), and its
// name; on a tie the first by name.
func (r *repairer) bestAltIV(dfd int, ents []syscallcompat.DirEntry, entries []string) ([]byte, string) {
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name)
	}
	alts, _ := r.nt.ReadAltIVsAt(dfd, names)
	slices.SortFunc(alts, func(a, b nametransform.AltIV) int { return strings.Compare(a.IVFileName(), b.IVFileName()) })
	var best []byte
	var bestName string
	bestN := 0
	for _, a := range alts {
		n := 0
		for _, e := range entries {
			if _, err := r.nt.DecryptNameAt(dfd, e, a.IV); err == nil {
				n++
			}
		}
		if n > bestN || best == nil && len(entries) == 0 {
			best, bestName, bestN = a.IV, a.IVFileName(), n
		}
	}
	return best, bestName
}

// replaceDirIV quarantines an invalid gocryptfs.diriv, if any, and writes
// iv (or a fresh random IV when iv is nil).
func (r *repairer) replaceDirIV(cipherDir string, iv []byte) error {
	rel := join(cipherDir, nametransform.DirIVFilename)
	if r.exists(rel) {
		if _, err := r.quarantine(rel); err != nil {
			return err
		}
	}
	if iv == nil {
		iv = newDirIV()
	}
	return r.placeNewFile(rel, 0o444, iv)
}

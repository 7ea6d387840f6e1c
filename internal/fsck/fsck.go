// Package fsck checks a forward-mode CIPHERDIR for damage without mounting
// it (docs/cli.md section 6.5): it walks the ciphertext tree directly with the
// core packages (nametransform for names, symlink targets and xattrs,
// contentio for file contents) and reports every entry that a mount could
// not show or read.
//
// The check is strictly read-only: every file and directory is opened
// O_RDONLY (with O_NOATIME where permitted, so that not even access times
// change), relative to its parent directory's descriptor and with
// O_NOFOLLOW, so a symlink planted in CIPHERDIR is never followed. Nothing
// is created, written, renamed or removed.
//
// Directories are visited in sorted order of their plaintext names; within
// a directory, undecryptable entries are reported first (sorted by their
// ciphertext names). Hard-linked files are checked once.
package fsck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/conflictname"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/contentio"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Kind classifies a Problem.
type Kind int

const (
	// CorruptName: a directory entry whose name cannot be decrypted, or a
	// hashed long name whose ".name" file is missing or invalid.
	CorruptName Kind = iota
	// DirError: a directory that cannot be listed or whose
	// gocryptfs.diriv is missing or invalid; its contents are not checked.
	DirError
	// FileError: a regular file whose header or a block does not decrypt,
	// which ends in an incomplete block, or which is shorter than a header.
	FileError
	// OpenError: an entry that cannot be opened or stat'ed.
	OpenError
	// SymlinkError: a symlink whose target does not decrypt.
	SymlinkError
	// XattrListError: the extended attributes of an entry cannot be listed.
	XattrListError
	// XattrNameError: an encrypted extended attribute name that does not
	// decrypt.
	XattrNameError
	// XattrValueError: an extended attribute value that cannot be read or
	// does not decrypt.
	XattrValueError
	// Skipped: an entry that could not be checked for lack of permission.
	// It is not counted as corrupt.
	Skipped
	// OrphanLongName: a long-name companion ".name" file whose hashed
	// entry does not exist, nor a sync tool's conflict copy of it (left by
	// an interrupted create or delete, or by a sync tool). A mount ignores
	// it; -fsck -repair quarantines it.
	OrphanLongName
	// SyncConflict: a sync tool's conflict copy of an entry, or an entry
	// under a conflict copy of gocryptfs.diriv (a directory created on two
	// machines). A mount shows it (nametransform/conflict.go) and it is
	// checked like any entry; it is a warning, not counted as corrupt.
	SyncConflict
	// XattrUnsupported: the backing filesystem cannot list extended
	// attributes (some FUSE filesystems such as rclone mount answer EIO
	// or ENOSYS, others EOPNOTSUPP). Reported once per check, for the
	// first entry where it happened, as a warning: no entry is corrupt
	// for it, and a mount over such storage cannot keep xattrs either.
	XattrUnsupported

	// numKinds counts the kinds above; it must stay last.
	numKinds
)

// kindNames are the names of the kinds in -fsck -json output
// (internal/repair refines FileError and DirError by the damage it
// finds). TestKindNames checks that every kind has its own.
var kindNames = [numKinds]string{
	CorruptName:      "undecryptable-name",
	DirError:         "dir-error",
	FileError:        "file-error",
	OpenError:        "open-error",
	SymlinkError:     "undecryptable-symlink",
	XattrListError:   "xattr-list-error",
	XattrNameError:   "undecryptable-xattr-name",
	XattrValueError:  "undecryptable-xattr-value",
	Skipped:          "skipped",
	OrphanLongName:   "orphan-long-name-file",
	SyncConflict:     "sync-conflict",
	XattrUnsupported: "xattr-unsupported",
}

// String returns the kind's name in -fsck -json output, such as
// "sync-conflict".
func (k Kind) String() string {
	if k >= 0 && k < numKinds && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind-%d", int(k))
}

// Problem is one finding. Its String method gives the line -fsck prints.
type Problem struct {
	// Kind says what is wrong.
	Kind Kind
	// Path is the plaintext path of the entry, relative to the root ("" is
	// the root). For CorruptName it is the directory holding the entry.
	Path string
	// CipherPath is the path of the affected backing entry relative to
	// CIPHERDIR.
	CipherPath string
	// Name is the ciphertext name (CorruptName, OrphanLongName), the stored
	// or decrypted xattr name (XattrNameError, XattrValueError), or
	// gocryptfs.diriv for a DirError caused by a missing or invalid
	// directory IV (as opposed to a directory that cannot be listed).
	Name string
	// Ino is the backing inode number of a file (FileError).
	Ino uint64
	// Err is the underlying error, if any.
	Err error
	// AltIV is, for a SyncConflict entry whose name decrypts only under a
	// conflict copy of gocryptfs.diriv, the name of that copy. Such a
	// copy may also have been planted by whoever holds the storage
	// (docs/threat-model.md, "Alternate directory IVs"), so it is named.
	AltIV string
}

// String formats the problem in the style of the reference's -fsck output,
// e.g. `fsck: corrupt entry in dir "": "foo"`.
func (p Problem) String() string {
	switch p.Kind {
	case CorruptName:
		if p.Err != nil && !errors.Is(p.Err, nametransform.ErrBadName) {
			return fmt.Sprintf("fsck: corrupt entry in dir %q: %q: %v", p.Path, p.Name, p.Err)
		}
		return fmt.Sprintf("fsck: corrupt entry in dir %q: %q", p.Path, p.Name)
	case DirError:
		return fmt.Sprintf("fsck: error reading dir %q: %v", p.Path, p.Err)
	case FileError:
		return fmt.Sprintf("fsck: error reading file %q (inum %d): %v", p.Path, p.Ino, p.Err)
	case OpenError:
		return fmt.Sprintf("fsck: error opening %q: %v", p.Path, p.Err)
	case SymlinkError:
		return fmt.Sprintf("fsck: error reading symlink %q: %v", p.Path, p.Err)
	case XattrListError:
		return fmt.Sprintf("fsck: error listing xattrs on %q: %v", p.Path, p.Err)
	case XattrNameError:
		return fmt.Sprintf("fsck: corrupt xattr name on file %q: %q", p.Path, p.Name)
	case XattrValueError:
		return fmt.Sprintf("fsck: error reading xattr %q from %q: %v", p.Name, p.Path, p.Err)
	case Skipped:
		return fmt.Sprintf("fsck: skipping %q: %v", p.Path, p.Err)
	case OrphanLongName:
		return fmt.Sprintf("fsck: orphan long name file in dir %q: %q", p.Path, p.Name)
	case SyncConflict:
		if p.AltIV != "" {
			return fmt.Sprintf("fsck: warning: sync conflict in dir %q: %q shown as %q (name under the directory IV copy %q, not the directory's own IV)", p.Path, p.CipherPath, p.Name, p.AltIV)
		}
		return fmt.Sprintf("fsck: warning: sync conflict in dir %q: %q shown as %q", p.Path, p.CipherPath, p.Name)
	case XattrUnsupported:
		return fmt.Sprintf("fsck: warning: the backing filesystem cannot list extended attributes (%q: %v): xattrs are not checked, and a mount there cannot keep any", p.Path, p.Err)
	}
	return fmt.Sprintf("fsck: problem %d with %q: %v", int(p.Kind), p.Path, p.Err)
}

// Options configures Check.
type Options struct {
	// CipherDir is the ciphertext directory (forward mode) to check.
	CipherDir string
	// NameTransform and ContentEnc must be built from the filesystem's
	// master key and feature flags.
	NameTransform *nametransform.NameTransform
	ContentEnc    *contentenc.ContentEnc
	// Report, if set, is called for every problem as soon as it is found,
	// in walk order.
	Report func(Problem)
	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
}

// Result summarizes a check.
type Result struct {
	// Corrupt is the number of problems found (one per reported line,
	// skipped entries excluded).
	Corrupt int
	// Skipped is the number of entries not checked for lack of permission.
	Skipped int
	// Warnings counts SyncConflict findings; they do not make a check
	// unclean.
	Warnings int
	// NoXattrs is set when the backing filesystem could not list extended
	// attributes (one XattrUnsupported finding); it does not make a check
	// unclean.
	NoXattrs bool
}

// Clean reports whether nothing was found and nothing skipped.
func (r Result) Clean() bool { return r.Corrupt == 0 && r.Skipped == 0 }

// ErrSetup is wrapped by Check's error when the check could not start
// (bad options, CIPHERDIR not openable).
var ErrSetup = errors.New("fsck: cannot start")

// Check walks the whole CIPHERDIR. It returns the summary and nil when the
// walk completed (problems are in the Result, not the error); an error
// wrapping ctx.Err() when cancelled (the Result then covers what was
// checked so far); or an error wrapping ErrSetup.
func Check(ctx context.Context, opts Options) (Result, error) {
	if opts.NameTransform == nil || opts.ContentEnc == nil || opts.CipherDir == "" {
		return Result{}, fmt.Errorf("%w: incomplete options", ErrSetup)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &checker{
		ctx:   ctx,
		opts:  opts,
		nt:    opts.NameTransform,
		ce:    opts.ContentEnc,
		log:   log,
		table: contentio.NewTable(),
		seen:  make(map[devIno]bool),
	}
	// The root itself was named by the user and may be reached through a
	// symlink; everything below it is opened with O_NOFOLLOW.
	fd, err := syscallcompat.OpenDirPath(opts.CipherDir)
	if err != nil {
		return Result{}, fmt.Errorf("%w: open %s: %w", ErrSetup, opts.CipherDir, err)
	}
	defer syscallcompat.Close(fd)
	c.xattrs(fd, "", "")
	c.dir(fd, "", "", true)
	if err := ctx.Err(); err != nil {
		return c.res, fmt.Errorf("fsck: aborted: %w", err)
	}
	return c.res, nil
}

// Side files of the config in the root (docs/format.md 2.8). With encrypted
// names they can never be entries, so they are not reported as corrupt.
const (
	confTmpName = nametransform.ConfDefaultName + ".tmp"
	confBakName = nametransform.ConfDefaultName + ".bak"
)

type devIno struct{ dev, ino uint64 }

type checker struct {
	ctx   context.Context
	opts  Options
	nt    *nametransform.NameTransform
	ce    *contentenc.ContentEnc
	log   *slog.Logger
	table *contentio.Table
	// seen holds the hard-linked files already checked.
	seen map[devIno]bool
	// noNoatime is set once O_NOATIME was refused (not our file, no
	// CAP_FOWNER), so that later opens do not try it again.
	noNoatime bool
	// xattrsProbed is set once the first entry's attributes were listed
	// (see xattrsUnsupported).
	xattrsProbed bool
	res          Result
}

// report records a problem and hands it to the caller.
func (c *checker) report(p Problem) {
	switch p.Kind {
	case Skipped:
		c.res.Skipped++
	case SyncConflict:
		c.res.Warnings++
	case XattrUnsupported:
		c.res.NoXattrs = true
	default:
		c.res.Corrupt++
	}
	c.log.Debug("fsck problem", "kind", int(p.Kind), "path", p.Path, "cipherPath", p.CipherPath, "err", p.Err)
	if c.opts.Report != nil {
		c.opts.Report(p)
	}
}

// denied reports whether err is a permission problem (the entry is
// skipped rather than called corrupt).
func denied(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// problem reports err for the entry, as Skipped when it is a permission
// problem and as kind otherwise.
func (c *checker) problem(kind Kind, plainPath, cipherPath string, err error) {
	if denied(err) {
		kind = Skipped
	}
	c.report(Problem{Kind: kind, Path: plainPath, CipherPath: cipherPath, Err: err})
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// child is a decrypted directory entry.
type child struct {
	plain, cipher string
}

// dir checks the contents of the directory open at fd (owned by the
// caller).
func (c *checker) dir(fd int, plainDir, cipherDir string, isRoot bool) {
	if c.ctx.Err() != nil {
		return
	}
	var iv []byte
	if c.nt.UsesDirIV() {
		var err error
		if iv, err = nametransform.ReadDirIVAt(fd); err != nil {
			if denied(err) {
				c.problem(DirError, plainDir, cipherDir, err)
			} else {
				c.report(Problem{Kind: DirError, Path: plainDir, CipherPath: cipherDir, Name: nametransform.DirIVFilename, Err: err})
			}
			return
		}
	}
	ents, err := syscallcompat.Getdents(fd)
	if err != nil {
		c.problem(DirError, plainDir, cipherDir, err)
		return
	}
	// Sorted, so that the report order and the choice between entries
	// that would be shown under the same name are stable.
	slices.SortFunc(ents, func(a, b syscallcompat.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	children := make([]child, 0, len(ents))
	c.nt.DecodeDir(fd, ents, iv, isRoot, func(e nametransform.DecodedEntry) {
		name := e.Backing.Name
		switch e.Outcome {
		case nametransform.Shown:
			children = append(children, child{plain: e.Name, cipher: name})
		case nametransform.ShownConflict:
			c.report(Problem{Kind: SyncConflict, Path: plainDir, CipherPath: join(cipherDir, name), Name: e.Name, AltIV: e.AltIV})
			children = append(children, child{plain: e.Name, cipher: name})
		case nametransform.Internal:
			if e.Kind == nametransform.KindLongNameFile {
				c.orphan(ents, plainDir, cipherDir, name)
			}
		case nametransform.Undecryptable, nametransform.ShownBadName:
			c.badName(plainDir, cipherDir, name, e.Err, isRoot)
		case nametransform.BadAltIV:
			c.report(Problem{Kind: CorruptName, Path: plainDir, CipherPath: join(cipherDir, name), Name: name, Err: e.Err})
		}
	})
	slices.SortFunc(children, func(a, b child) int { return cmp.Compare(a.plain, b.plain) })
	for _, ch := range children {
		if c.ctx.Err() != nil {
			return
		}
		c.entry(fd, join(plainDir, ch.plain), join(cipherDir, ch.cipher), ch.cipher)
	}
}

// badName reports the backing entry name of a directory that a mount
// does not show (or shows only by -badname, which a check does not use):
// a corrupt name, or a skipped one when its long name's companion file
// could not be read for lack of permission. The config's side files in
// the root are no entries and not reported.
func (c *checker) badName(plainDir, cipherDir, name string, err error, isRoot bool) {
	switch {
	case isRoot && !c.nt.PlaintextNames() && (name == confTmpName || name == confBakName):
		// Left by an interrupted config write or by -passwd
		// -masterkey; never part of the plaintext view.
		c.log.Debug("fsck: ignoring config side file", "name", name)
	case denied(err):
		c.report(Problem{Kind: Skipped, Path: join(plainDir, name), CipherPath: join(cipherDir, name), Err: err})
	default:
		c.report(Problem{Kind: CorruptName, Path: plainDir, CipherPath: join(cipherDir, name), Name: name, Err: err})
	}
}

// orphan reports the companion file name (of the sorted listing ents) if
// neither its hashed entry nor a sync tool's conflict copy of that entry
// (which a mount shows under the companion's name) exists.
func (c *checker) orphan(ents []syscallcompat.DirEntry, plainDir, cipherDir, name string) {
	hashed := strings.TrimSuffix(name, nametransform.LongNameSuffix)
	if _, found := slices.BinarySearchFunc(ents, hashed, func(e syscallcompat.DirEntry, n string) int {
		return strings.Compare(e.Name, n)
	}); found {
		return
	}
	for _, e := range ents {
		if _, ok := conflictname.BaseIs(e.Name, hashed); ok {
			return
		}
	}
	c.report(Problem{Kind: OrphanLongName, Path: plainDir, CipherPath: join(cipherDir, name), Name: name})
}

// entry checks one decrypted entry of the directory dirfd.
func (c *checker) entry(dirfd int, plainPath, cipherPath, cName string) {
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(dirfd, cName, &st); err != nil {
		c.problem(OpenError, plainPath, cipherPath, err)
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := syscallcompat.OpenDirAt(dirfd, cName)
		if err != nil {
			c.problem(DirError, plainPath, cipherPath, err)
			return
		}
		defer syscallcompat.Close(fd)
		c.xattrs(fd, plainPath, cipherPath)
		c.dir(fd, plainPath, cipherPath, false)
	case unix.S_IFREG:
		if st.Nlink > 1 {
			k := devIno{uint64(st.Dev), st.Ino}
			if c.seen[k] {
				return
			}
			c.seen[k] = true
		}
		c.file(dirfd, plainPath, cipherPath, cName)
	case unix.S_IFLNK:
		stored, err := syscallcompat.Readlinkat(dirfd, cName)
		if err != nil {
			c.problem(SymlinkError, plainPath, cipherPath, err)
			return
		}
		if _, err := c.nt.DecryptSymlinkTarget(stored); err != nil {
			c.problem(SymlinkError, plainPath, cipherPath, err)
		}
	default:
		// Fifos, sockets and device nodes have no encrypted content, and
		// Linux allows no user.* xattrs on them.
	}
}

// openRead opens name in dirfd read-only without following symlinks or
// blocking (a file swapped for a fifo meanwhile), preferring O_NOATIME.
func (c *checker) openRead(dirfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK
	if !c.noNoatime {
		fd, err := syscallcompat.Openat(dirfd, name, flags|syscallcompat.NoatimeFlag, 0)
		if err != syscall.EPERM {
			return fd, err
		}
		c.noNoatime = true
	}
	return syscallcompat.Openat(dirfd, name, flags, 0)
}

// file checks the contents and xattrs of a regular file.
func (c *checker) file(dirfd int, plainPath, cipherPath, cName string) {
	fd, err := c.openRead(dirfd, cName)
	if err != nil {
		c.problem(OpenError, plainPath, cipherPath, err)
		return
	}
	// No logger: corruption is reported as a Problem, not logged twice.
	f, err := contentio.Open(c.table, c.ce, fd, contentio.Options{})
	if err != nil {
		syscallcompat.Close(fd)
		c.problem(OpenError, plainPath, cipherPath, err)
		return
	}
	defer f.Close()
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		c.problem(OpenError, plainPath, cipherPath, err)
		return
	}
	if st.Size > 0 && st.Size < contentenc.HeaderLen {
		// The reference reads such a file as empty without complaint, but
		// no writer produces it: the header was cut.
		c.report(Problem{Kind: FileError, Path: plainPath, CipherPath: cipherPath, Ino: st.Ino,
			Err: fmt.Errorf("truncated file header: %d bytes, want %d", st.Size, contentenc.HeaderLen)})
	} else if err := f.Verify(c.ctx); err != nil {
		if c.ctx.Err() != nil {
			return
		}
		var ce *contentio.CorruptError
		if errors.As(err, &ce) {
			err = ce.Err // drop contentio's "doRead <ino>:" prefix; the line names the inode
		}
		c.report(Problem{Kind: FileError, Path: plainPath, CipherPath: cipherPath, Ino: st.Ino, Err: err})
	}
	c.xattrs(fd, plainPath, cipherPath)
}

// xattrsUnsupported reports whether a listxattr error of the entry that
// is checked first (the CIPHERDIR root) means that the backing filesystem
// has no (working) extended attributes rather than that the entry is
// damaged: EOPNOTSUPP (no xattr support), ENOSYS (a FUSE filesystem
// without the operation) and EIO, which rclone mount answers for every
// file. Later, only the first two mean that: an EIO of one entry on
// storage whose root listed its attributes is a damaged entry (a bad xattr
// block on a disk, whose data may well read fine), not a property of the
// storage.
func xattrsUnsupported(err error, first bool) bool {
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) || (first && errors.Is(err, syscall.EIO))
}

// xattrs checks the extended attributes of the file or directory open at
// fd. Backing attributes that the mount does not show (no encrypted
// prefix) and the unencrypted ACL attributes are not checked.
func (c *checker) xattrs(fd int, plainPath, cipherPath string) {
	first := !c.xattrsProbed
	c.xattrsProbed = true
	names, err := syscallcompat.FlistxattrAll(fd)
	if err != nil {
		if c.res.NoXattrs {
			return // the storage has none: said once
		}
		if xattrsUnsupported(err, first) {
			// A property of the storage, not damage of this entry:
			// said once per check.
			c.report(Problem{Kind: XattrUnsupported, Path: plainPath, CipherPath: cipherPath, Err: err})
			return
		}
		c.problem(XattrListError, plainPath, cipherPath, err)
		return
	}
	slices.Sort(names)
	for _, stored := range names {
		if nametransform.IsACLName(stored) || !strings.HasPrefix(stored, nametransform.XattrPrefix) {
			continue
		}
		name, err := c.nt.DecryptXattrName(stored)
		if errors.Is(err, nametransform.ErrHiddenXattr) {
			continue
		}
		if err != nil {
			c.report(Problem{Kind: XattrNameError, Path: plainPath, CipherPath: cipherPath, Name: stored, Err: err})
			continue
		}
		val, err := syscallcompat.FgetxattrAll(fd, stored)
		if err == nil {
			_, err = c.nt.DecryptXattrValue(val)
		}
		if err != nil {
			kind := XattrValueError
			if denied(err) {
				kind = Skipped
			}
			c.report(Problem{Kind: kind, Path: plainPath, CipherPath: cipherPath, Name: name, Err: err})
		}
	}
}

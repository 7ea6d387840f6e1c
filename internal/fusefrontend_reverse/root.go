// Package fusefrontend_reverse is the reverse-mode FUSE filesystem: a
// read-only, encrypted view of a plaintext directory (PLAINDIR) that is
// byte-identical to what the reference shows (docs/format.md section 9). Copying
// the view and mounting the copy in forward mode yields the plaintext again.
//
// Nothing is random here: directory IVs, file IDs and every nonce are
// derived from the ciphertext path (nametransform.PathIV), so the view is
// stable across mounts. Besides the encrypted entries the view contains
// virtual files: gocryptfs.diriv in every directory, the
// gocryptfs.longname.<hash>.name companion of every hashed name, and
// gocryptfs.conf in the root (the bytes of PLAINDIR/.gocryptfs.reverse.conf
// as loaded at mount time, config.go).
//
// Every system call on PLAINDIR is made relative to a directory fd reached
// from the root fd one component at a time with O_NOFOLLOW (package
// syscallcompat). Every request recovers from panics and answers EIO, so one
// bad file cannot take the mount down. Any modification fails with EROFS.
package fusefrontend_reverse

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exclude"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/inomap"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// ReverseConfName is the config file inside PLAINDIR. In the view it appears
// as gocryptfs.conf in the root (unless a custom config path is used) and is
// never listed under an encrypted name.
const ReverseConfName = ".gocryptfs.reverse.conf"

// tagDirIV is the inomap tag of the virtual gocryptfs.diriv files: their
// inode number is derived from the directory's. NewRootNode reserves the
// first namespace for it on the root device, so that (as observed with the
// reference, docs/format.md 10) a diriv is numbered 2^48 + directory inode
// whatever else is seen first.
const tagDirIV inomap.Tag = 1

// configGen is the go-fuse generation of the gocryptfs.conf node. The node
// shows the inode number of .gocryptfs.reverse.conf, like the reference,
// but must never be merged with a hard link to that file elsewhere in
// PLAINDIR (which shows encrypted content): go-fuse merges nodes only when
// inode number and generation are equal.
const configGen = 1

// maxLongNameCache bounds the hashed-name cache; it is simply emptied when
// full (entries are cheap to recompute).
const maxLongNameCache = 100000

// Args configures the reverse filesystem.
type Args struct {
	// PlainDir is the plaintext directory to present encrypted.
	PlainDir string
	// CustomConfig is set when -config points somewhere else: then no
	// gocryptfs.conf is shown and .gocryptfs.reverse.conf is not special.
	CustomConfig bool
	// Config is PLAINDIR/.gocryptfs.reverse.conf as the mount loaded it
	// (configfile.LoadRaw, through a symlink if it is one); the view
	// shows exactly these bytes as gocryptfs.conf. Nil (a mount with
	// -masterkey or -zerokey): NewRootNode reads the file itself with the
	// same rules, and the view has no gocryptfs.conf if it is missing or
	// refused. Ignored with CustomConfig. Not modified.
	Config *configfile.Raw
	// PlaintextNames and DeterministicNames must match the NameTransform;
	// they are repeated here for sanity checks.
	PlaintextNames, DeterministicNames bool
	// Excludes are -exclude paths (literal, relative to PlainDir).
	Excludes []string
	// ExcludeWildcards are -exclude-wildcard gitignore patterns.
	ExcludeWildcards []string
	// ExcludeFrom are files with gitignore patterns (-exclude-from).
	ExcludeFrom []string
	// OneFileSystem shows directories on other devices (mount points) as
	// empty directories.
	OneFileSystem bool
	// MountPoint is where the view is mounted. When it lies inside
	// PlainDir, it is left out of the view (not listed, not found), so
	// that the view never contains itself: a recursive reader (a backup
	// of the view) would otherwise descend into the view again, without
	// end. Zero value: nothing is left out.
	MountPoint MountPointID
	// ForceOwner, if set, replaces uid and gid in every attribute.
	ForceOwner *fuse.Owner
	// NoXattr hides all extended attributes.
	NoXattr bool
	// Logger receives warnings and errors; nil discards them.
	Logger *slog.Logger
}

// MountPointID identifies a mount point directory by its parent directory
// (device and inode number, as stat reports them) and its name in it. Once
// the view is mounted, a stat of the mount point shows the view's root, and
// a lookup of it enters the view; the parent and the name are what stays
// visible from below, without entering. They also stay right while the
// view is mounted: a mount point cannot be renamed or removed (EBUSY), and
// renaming a directory above it keeps the parent's identity.
type MountPointID struct {
	ParentDev, ParentIno uint64
	Name                 string
}

// isMountPoint reports whether the entry name of the plaintext directory
// with stat result dirSt is the view's own mount point (Args.MountPoint).
func (rn *RootNode) isMountPoint(dirSt *unix.Stat_t, name string) bool {
	mp := &rn.args.MountPoint
	return mp.Name != "" && name == mp.Name && uint64(dirSt.Dev) == mp.ParentDev && dirSt.Ino == mp.ParentIno
}

// ErrExcludeFrom is wrapped by the NewRootNode error for an unreadable
// -exclude-from file (it also wraps ErrExclude).
var ErrExcludeFrom = exclude.ErrExcludeFrom

// ErrExclude is wrapped by every NewRootNode error about the -exclude,
// -exclude-wildcard and -exclude-from rules (the command line exits 29).
var ErrExclude = errors.New("invalid exclusion rules")

// excludeError marks err with ErrExclude without changing its message.
type excludeError struct{ err error }

func (e *excludeError) Error() string   { return e.err.Error() }
func (e *excludeError) Unwrap() []error { return []error{ErrExclude, e.err} }

// ErrNotAESSIV is returned by NewRootNode for a content cipher other than
// AES-SIV: derived nonces are only safe with a misuse-resistant cipher.
var ErrNotAESSIV = errors.New("reverse mode requires AES-SIV content encryption")

// RootNode is the root directory of the view. It implements
// fs.InodeEmbedder; pass it to fs.Mount together with RootStableAttr (as
// fs.Options.RootStableAttr) so that the root shows its real inode number.
type RootNode struct {
	node

	args   Args
	nt     *nametransform.NameTransform
	ce     *contentenc.ContentEnc
	log    *slog.Logger
	excl   *exclude.Matcher
	rootFd int
	// hooks are the tests' seams; empty in the release build (hooks.go).
	// (Not the last field: a trailing zero-size field would be padded.)
	hooks testHooks

	// readResults avoids an allocation per READ reply.
	readResults fuseutil.ReadResults

	rootDev, rootIno uint64
	inos             *inomap.Map
	// collisionName is how a plaintext gocryptfs.conf in the root is shown
	// with PlaintextNames (it would clash with the config).
	collisionName string
	// conf is what gocryptfs.conf shows (nil: no gocryptfs.conf), confIno
	// its inode number; both fixed at NewRootNode (config.go).
	conf    *configfile.Raw
	confIno uint64

	mu sync.Mutex
	// nameInos remembers the inode numbers handed out to .name files, by
	// ciphertext path, so that they stay stable while mounted.
	nameInos map[string]uint64
	// hardlinks remembers, per backing inode with several links, the
	// ciphertext path whose derived file ID and nonces all links share.
	hardlinks map[devIno]string
	// longNames caches hashed name → plaintext name, keyed by
	// "<ciphertext dir path>/<hashed name>".
	longNames map[string]string
}

type devIno struct{ dev, ino uint64 }

// NewRootNode opens args.PlainDir and returns the root of the encrypted
// view. nt and ce must come from the reverse config (AES-SIV). An
// unreadable -exclude-from file gives an error wrapping ErrExcludeFrom;
// every exclusion error wraps ErrExclude.
func NewRootNode(args Args, nt *nametransform.NameTransform, ce *contentenc.ContentEnc) (*RootNode, error) {
	if nt == nil || ce == nil {
		return nil, errors.New("fusefrontend_reverse: nil NameTransform or ContentEnc")
	}
	if ce.Cipher() != cryptocore.AESSIV {
		return nil, fmt.Errorf("fusefrontend_reverse: %w (have %v)", ErrNotAESSIV, ce.Cipher())
	}
	if args.PlaintextNames != nt.PlaintextNames() {
		return nil, fmt.Errorf("fusefrontend_reverse: PlaintextNames=%v does not match the NameTransform", args.PlaintextNames)
	}
	if !args.PlaintextNames && args.DeterministicNames != nt.DeterministicNames() {
		return nil, fmt.Errorf("fusefrontend_reverse: DeterministicNames=%v does not match the NameTransform", args.DeterministicNames)
	}
	excl, err := exclude.New(args.Excludes, args.ExcludeWildcards, args.ExcludeFrom)
	if err != nil {
		return nil, &excludeError{fmt.Errorf("fusefrontend_reverse: %w", err)}
	}
	logger := args.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The user-supplied root itself may be reached through symlinks; only
	// what lies below it is opened with O_NOFOLLOW.
	fd, err := syscallcompat.RetryInt(func() (int, error) {
		return unix.Open(args.PlainDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, fmt.Errorf("fusefrontend_reverse: open plaintext dir %q: %w", args.PlainDir, err)
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		syscallcompat.Close(fd)
		return nil, fmt.Errorf("fusefrontend_reverse: stat plaintext dir %q: %w", args.PlainDir, err)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	rn := &RootNode{
		args:          args,
		nt:            nt,
		ce:            ce,
		log:           logger,
		excl:          excl,
		rootFd:        fd,
		rootDev:       uint64(st.Dev),
		rootIno:       st.Ino,
		inos:          inomap.New(uint64(st.Dev)),
		collisionName: nametransform.ConfDefaultName + "_NAME_COLLISION_" + strconv.FormatUint(binary.BigEndian.Uint64(rnd[:]), 10),
		nameInos:      make(map[string]uint64),
		hardlinks:     make(map[devIno]string),
		longNames:     make(map[string]string),
	}
	rn.node = node{rn: rn, kind: kindDir}
	rn.inos.Translate(inomap.QIno{Dev: uint64(st.Dev), Tag: tagDirIV})
	if rn.conf = loadReverseConfig(&args, logger); rn.conf != nil {
		rn.confIno = rn.translateIno(&rn.conf.Stat)
	}
	return rn, nil
}

// RootStableAttr returns the identity of the root directory; pass it as
// fs.Options.RootStableAttr so that the root shows the inode number of
// PLAINDIR. (It used to be called StableAttr, which hid the embedded
// fs.Inode method of that name.)
func (rn *RootNode) RootStableAttr() *fs.StableAttr {
	return &fs.StableAttr{Mode: syscall.S_IFDIR, Ino: rn.inos.Translate(inomap.QIno{Dev: rn.rootDev, Ino: rn.rootIno})}
}

// Close releases the PLAINDIR root fd. Call it only after unmounting.
func (rn *RootNode) Close() error {
	return syscallcompat.Close(rn.rootFd)
}

// enter runs the test hook (tests only; nothing in the release build,
// hooks.go). It must be called after the deferred fuseutil.Recover so that
// a panic in the hook is caught like a real one.
func (rn *RootNode) enter(op string) { rn.hooks.enter(op) }

// excluded reports whether the plaintext path is hidden by -exclude*. The
// root and the reverse config can never be excluded.
func (rn *RootNode) excluded(pPath string, isDir bool) bool {
	if pPath == "" || pPath == ReverseConfName {
		return false
	}
	return rn.excl.Match(pPath, isDir)
}

// dirIV returns the EME tweak for names in the directory at cipher path
// cDir (ignored by the NameTransform with deterministic or plaintext names).
func (rn *RootNode) dirIV(cDir string) []byte {
	if !rn.nt.UsesDirIV() {
		return nil
	}
	return nametransform.PathIV(cDir, nametransform.PurposeDirIV)
}

// mapsConfig reports whether the root's .gocryptfs.reverse.conf is shown as
// gocryptfs.conf.
func (rn *RootNode) mapsConfig() bool { return !rn.args.CustomConfig }

// translateIno returns the shown inode number of a backing entry.
func (rn *RootNode) translateIno(st *unix.Stat_t) uint64 {
	return rn.inos.Translate(inomap.QIno{Dev: uint64(st.Dev), Ino: st.Ino})
}

// dirIVIno returns the inode number of the gocryptfs.diriv in the directory
// with backing identity st: namespace(dev, tagDirIV) << 48 | dir inode.
func (rn *RootNode) dirIVIno(st *unix.Stat_t) uint64 {
	return rn.inos.Translate(inomap.QIno{Dev: uint64(st.Dev), Tag: tagDirIV, Ino: st.Ino})
}

// nameFileIno returns the inode number of the .name file at cipher path
// cPath, from the counter starting at 2^63, remembered for the mount.
func (rn *RootNode) nameFileIno(cPath string) uint64 {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if ino, ok := rn.nameInos[cPath]; ok {
		return ino
	}
	ino := rn.inos.NextSpill()
	rn.nameInos[cPath] = ino
	return ino
}

// contentPath returns the ciphertext path whose derived file ID and nonces
// the file st (opened through cPath) uses: cPath itself, except for a file
// with several hard links, which keeps the path through which it was first
// opened in this mount, so that all links show identical bytes.
func (rn *RootNode) contentPath(st *unix.Stat_t, cPath string) string {
	if st.Nlink <= 1 {
		return cPath
	}
	k := devIno{uint64(st.Dev), st.Ino}
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if p, ok := rn.hardlinks[k]; ok {
		return p
	}
	rn.hardlinks[k] = cPath
	return cPath
}

// cachedLongName returns the plaintext name cached for a hashed name.
func (rn *RootNode) cachedLongName(cDir, hashed string) (string, bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	p, ok := rn.longNames[joinPath(cDir, hashed)]
	return p, ok
}

// cacheLongName remembers the plaintext name of a hashed name.
func (rn *RootNode) cacheLongName(cDir, hashed, pName string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if len(rn.longNames) >= maxLongNameCache {
		clear(rn.longNames)
	}
	rn.longNames[joinPath(cDir, hashed)] = pName
}

// joinPath joins a relative directory path ("" = root) and a name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

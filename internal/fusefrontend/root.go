// Package fusefrontend is the forward-mode FUSE filesystem: it serves the
// plaintext view of a CIPHERDIR through the go-fuse node API. Names are
// translated by package nametransform, file contents are read and written
// exclusively through package contentio, and every system call on CIPHERDIR
// is made relative to a directory fd that was reached from the root fd one
// component at a time with O_NOFOLLOW (package syscallcompat).
//
// Errors become errno values in one place (toErrno); every operation
// recovers from panics and answers EIO, so a bug triggered by one request
// never unmounts the filesystem.
//
// Ownership: running as root with Args.AllowOther, the entries that
// create, mkdir, mknod and symlink make (with their long-name companion
// files) are created with the filesystem identity of the calling process
// (fsuid, fsgid, supplementary groups; see asCaller), so the kernel picks
// owner and group (set-group-ID directories), checks permissions and
// applies quota as for the caller. For mkdir that includes
// the new directory's gocryptfs.diriv, which is owned like its directory so
// that the owner can later remove the directory with nothing left behind
// that they do not own.
//
// Mount with the options of package mountopts (the binary and the tests
// do): NullPermissions (else go-fuse shows mode 000 entries as 0755/0644),
// EnableLocks (fcntl/flock locks are forwarded as open-file-description
// locks on the handle's backing fd, so locks taken through different opens,
// through another mount of the same CIPHERDIR or on the ciphertext file
// itself conflict as on a local filesystem; two processes sharing one open
// file share its locks), zero entry/attr timeouts with SharedStorage, and
// default_permissions together with allow_other (this package does no
// permission checks of its own beyond those of the backing filesystem).
//
// Not implemented: copy_file_range (ENOSYS, the kernel falls back to
// read/write).
package fusefrontend

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/contentio"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/inomap"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Args configures the filesystem. The zero value of every flag is the
// default gocryptfs behaviour.
type Args struct {
	// CipherDir is the path of the backing ciphertext directory.
	CipherDir string
	// PlaintextNames and DeterministicNames must match the NameTransform;
	// they are repeated here for documentation and sanity checks.
	PlaintextNames, DeterministicNames bool
	// ForceOwner, if set, replaces uid and gid in every attribute returned.
	ForceOwner *fuse.Owner
	// AllowOther: when running as root, new entries are created with the
	// calling user's identity (fuse.Context Uid/Gid/Pid).
	AllowOther bool
	// SharedStorage: CIPHERDIR may be changed by others concurrently; the
	// directory fd/IV cache is disabled.
	SharedStorage bool
	// NoPrealloc disables preallocation before writes (see contentio).
	NoPrealloc bool
	// Suid makes security.capability readable (otherwise EOPNOTSUPP).
	Suid bool
	// NoXattr disables extended attributes (docs/format.md section 8).
	NoXattr bool
	// KernelCache lets the kernel keep file contents cached across opens.
	KernelCache bool
	// ReadOnly refuses every modification with EROFS.
	ReadOnly bool
	// Writeback tells that the mount runs with the kernel's writeback
	// cache (mountopts.Writeback). The kernel then computes the offset of
	// O_APPEND writes itself (from its own, authoritative file size) and
	// flushes dirty pages through any writable handle, also an O_APPEND
	// one, so WRITE offsets are taken as they come.
	Writeback bool
	// ForwardLocks tells that the kernel forwards fcntl and flock locks
	// (mountopts.ForwardLocks, -sharedstorage): they are taken on the
	// backing files, per lock owner (locks.go), and every close sends
	// FLUSH, which releases the closing process's locks.
	ForwardLocks bool
	// Atime is the access time policy (see AtimeFromOptions).
	Atime Atime
	// NoDiratime reads directories with O_NOATIME (-ko nodiratime, see
	// NoDiratimeFromOptions).
	NoDiratime bool
	// ACL: the mount has POSIX ACLs enabled (MountOptions.EnableAcl);
	// see acl.go.
	ACL bool
	// Logger receives warnings and errors; nil discards them.
	Logger *slog.Logger
}

// RootNode is the root directory of the mount. It implements
// fs.InodeEmbedder; pass it to fs.Mount.
type RootNode struct {
	Node

	args    Args
	nt      *nametransform.NameTransform
	ce      *contentenc.ContentEnc
	log     *slog.Logger
	rootFd  int
	rootRef *dirRef // holds rootFd; released by Close
	// rootIno is the inode number the root shows (RootStableAttr).
	rootIno uint64
	// backingNoatime: CIPHERDIR's filesystem is mounted noatime, so a
	// read of a backing file never moves its atime (atimeDue).
	backingNoatime bool
	umask          uint32
	asRoot         bool
	daemon         daemonCred // the daemon's identity, for asCaller
	reuse          inoReuse   // inode numbers shown instead of reused ones (inoreuse.go)
	// flush: FLUSH requests are answered, not refused with ENOSYS
	// (flush.go).
	flush    bool
	inos     *inomap.Map
	dirCache *dirCache
	names    *nameMemo // backing names of plaintext names
	xattrs   *nameMemo // encrypted xattr names
	openDirs openDirs
	locks    lockTable // forwarded locks (Args.ForwardLocks)
	altIVs   altIVCache
	table    *contentio.Table
	warned   warnLog
	// xattrAt reads attributes by parent fd and name (xattrfast.go).
	xattrAt syscallcompat.XattrAt
	// chmodLocks serializes the temporary chmods of openWriteOnly.
	chmodLocks inodeLocks

	// readResults avoids an allocation per READ reply.
	readResults fuseutil.ReadResults

	// hooks are the tests' seams; empty in the release build (hooks.go).
	// (Not the last field: a trailing zero-size field would be padded.)
	hooks testHooks

	// space watches the free space of CIPHERDIR, writers the files open
	// for writing (fullfs.go).
	space   *spaceGuard
	writers writers

	openFiles atomic.Int64
}

// NewRootNode opens args.CipherDir and returns the root of the plaintext
// view. nt and ce must have been built from the filesystem's config.
func NewRootNode(args Args, nt *nametransform.NameTransform, ce *contentenc.ContentEnc) (*RootNode, error) {
	if nt == nil || ce == nil {
		return nil, fmt.Errorf("fusefrontend: nil NameTransform or ContentEnc")
	}
	if args.PlaintextNames != nt.PlaintextNames() {
		return nil, fmt.Errorf("fusefrontend: PlaintextNames=%v does not match the NameTransform", args.PlaintextNames)
	}
	if !args.PlaintextNames && args.DeterministicNames != nt.DeterministicNames() {
		return nil, fmt.Errorf("fusefrontend: DeterministicNames=%v does not match the NameTransform", args.DeterministicNames)
	}
	logger := args.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	fd, err := syscallcompat.RetryInt(func() (int, error) {
		return unix.Open(args.CipherDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, fmt.Errorf("open cipherdir %q: %w", args.CipherDir, err)
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		syscallcompat.Close(fd)
		return nil, fmt.Errorf("stat cipherdir: %w", err)
	}
	rn := &RootNode{
		args:     args,
		nt:       nt,
		ce:       ce,
		log:      logger,
		rootFd:   fd,
		umask:    readUmask(),
		asRoot:   os.Geteuid() == 0,
		flush:    flushNeeded(args, fd),
		inos:     inomap.New(uint64(st.Dev)),
		dirCache: newDirCache(args.SharedStorage),
		names:    newNameMemo(memoSlots),
		xattrs:   newNameMemo(xattrMemoSlots),
		table:    contentio.NewTable(),
		// As many repeated lock attempts at once as goroutines run at
		// once: more would only add threads (syscallcompat.LockPolls).
		// Taken at mount time; a later change of GOMAXPROCS (the
		// runtime follows cgroup CPU limits) does not resize it.
		locks: lockTable{polls: syscallcompat.NewLockPolls(runtime.GOMAXPROCS(0))},
	}
	if rn.asRoot && args.AllowOther {
		rn.daemon = readDaemonCred()
	}
	rn.rootRef = newDirRef(fd)
	rn.rootIno = rn.shownIno(&st)
	var sfs unix.Statfs_t
	rn.backingNoatime = syscallcompat.Fstatfs(fd, &sfs) == nil && sfs.Flags&syscallcompat.MountNoatime != 0
	rn.space = newSpaceGuard(fd, rn.enterLowSpace)
	rn.warned.init()
	rn.Node.rn = rn
	return rn, nil
}

// OpenFileCount returns the number of open file handles (for -idle).
func (rn *RootNode) OpenFileCount() int64 { return rn.openFiles.Load() }

// RootStableAttr is what to pass as fs.Options.RootStableAttr, as for the
// reverse frontend: the root shows the mapped inode number of the
// CIPHERDIR root (never 0, which programs take for a deleted entry), as
// every other directory shows its backing directory's. The kernel still
// knows the root by node ID 1 (go-fuse registers the root so whatever its
// inode number), so file handles of the root stay what they were.
func (rn *RootNode) RootStableAttr() *fs.StableAttr {
	return &fs.StableAttr{Mode: unix.S_IFDIR, Ino: rn.rootIno}
}

// Close releases the CIPHERDIR root fd and cached directory fds. Call it
// only after the filesystem has been unmounted.
func (rn *RootNode) Close() error {
	rn.dirCache.clear()
	// Borrowed references are gone once the filesystem is unmounted, so
	// this closes rootFd.
	rn.rootRef.release()
	return nil
}

// EncryptPath translates a plaintext path (relative to the mount root;
// leading and trailing slashes are ignored) into the backing path relative
// to CIPHERDIR. Every directory on the way must exist; the last component
// need not.
func (rn *RootNode) EncryptPath(plainPath string) (string, error) {
	p := cleanRel(plainPath)
	if p == "" {
		return "", nil
	}
	dir, name := splitPath(p)
	fd, iv, err := rn.openDir(dir)
	if err != nil {
		return "", fmt.Errorf("EncryptPath %q: %w", plainPath, err)
	}
	syscallcompat.Close(fd)
	cName, _, err := rn.encryptName(name, iv)
	if err != nil {
		return "", fmt.Errorf("EncryptPath %q: %w", plainPath, err)
	}
	if dir == "" {
		return cName, nil
	}
	// The directory part was resolved above, so re-encrypting each prefix
	// hits the directory cache or repeats a walk that just succeeded.
	cDir, err := rn.EncryptPath(dir)
	if err != nil {
		return "", err
	}
	return cDir + "/" + cName, nil
}

// DecryptPath translates a backing path relative to CIPHERDIR into the
// plaintext path, reading gocryptfs.diriv and long-name companion files of
// the real CIPHERDIR. The last component need not exist unless it is a
// hashed long name.
func (rn *RootNode) DecryptPath(cipherPath string) (string, error) {
	p := cleanRel(cipherPath)
	if p == "" {
		return "", nil
	}
	fd, err := syscallcompat.Dup(rn.rootFd)
	if err != nil {
		return "", err
	}
	defer func() { syscallcompat.Close(fd) }()
	comps := strings.Split(p, "/")
	plain := make([]string, 0, len(comps))
	for i, c := range comps {
		iv, err := rn.readDirIV(fd)
		if err != nil {
			return "", fmt.Errorf("DecryptPath %q: %w", cipherPath, err)
		}
		name, err := rn.nt.DecryptNameAt(fd, c, iv)
		if err != nil {
			return "", fmt.Errorf("DecryptPath %q: component %q: %w", cipherPath, c, err)
		}
		plain = append(plain, name)
		if i == len(comps)-1 {
			break
		}
		next, err := syscallcompat.OpenDirAt(fd, c)
		if err != nil {
			return "", fmt.Errorf("DecryptPath %q: %w", cipherPath, err)
		}
		syscallcompat.Close(fd)
		fd = next
	}
	return strings.Join(plain, "/"), nil
}

// cleanRel normalizes a user-supplied relative path; ".." components are
// resolved lexically and cannot climb above the root.
func cleanRel(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}

// readUmask returns the process umask from /proc/self/status without
// changing it (umask(2) can only be read by setting it, which would race
// with other threads). Backing entries are created with the plaintext
// mode, so a mode that the umask would cut is set again explicitly.
func readUmask() uint32 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o777 // unknown: always chmod explicitly
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err == nil {
				return uint32(m)
			}
		}
	}
	return 0o777
}

var _ = (fs.InodeEmbedder)((*RootNode)(nil))

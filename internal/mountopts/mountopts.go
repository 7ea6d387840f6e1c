// Package mountopts builds the go-fuse mount options of a gocryptfs mount
// (docs/cli.md, mount options). It is the one place that decides them: the
// binary and the FUSE tests of both frontends call Build, so the tests
// mount with exactly the options that ship.
package mountopts

import (
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

const (
	// MaxWrite is the largest write the kernel sends in one request (1 MiB):
	// fewer, larger requests for streaming writes.
	MaxWrite = 1 << 20
	// CacheTimeout is the attribute, entry and negative-lookup timeout.
	CacheTimeout = time.Second
)

// ReadAheadKB is the readahead window (KiB) set on the mount after it is
// up (fuseserve.Options.ReadAheadKB): the kernel caps the window
// negotiated at FUSE INIT at 128 KiB; with 4 MiB it sends streaming reads
// as 1 MiB READ requests (MaxWrite), several in flight, which the daemon
// decrypts with fewer round trips and on both cores.
const ReadAheadKB = 4096

// Params are the inputs of Build: the mount-relevant command line flags,
// already normalized (-ro wins over -rw and so on).
type Params struct {
	// CipherDir is the backing directory; it is the default FsName.
	CipherDir string
	// FsName overrides the first column of mount(8)/df -T.
	FsName string
	// Reverse selects the subtype gocryptfs-reverse; the reverse view is
	// read-only and never forwards locks.
	Reverse bool
	// ReadOnly is the effective read-only state ("ro"); RW asks for an
	// explicit "rw" (-rw).
	ReadOnly, RW bool
	// Suid, Dev and Exec allow what the kernel denies by default; NoExec
	// explicitly denies execution.
	Suid, Dev, Exec, NoExec bool
	// AllowOther lets other users in, with default_permissions.
	AllowOther bool
	// Context is the SELinux context= option.
	Context string
	// KernelOptions are extra comma-separated options (-ko).
	KernelOptions string
	// SharedStorage turns off all kernel caching of names and attributes
	// (CIPHERDIR may be changed behind our back) and forwards locks
	// (ForwardLocks).
	SharedStorage bool
	// SerializeReads makes the kernel send one READ at a time.
	SerializeReads bool
	// ACL enforces POSIX ACLs in the kernel.
	ACL bool
	// Debug enables go-fuse's own request trace (-fusedebug).
	Debug bool
	// NoWriteCache turns off the kernel's writeback cache (-nowritecache).
	NoWriteCache bool
}

// Writeback reports whether the mount asks for the kernel's writeback
// cache (CAP_WRITEBACK_CACHE): the kernel then keeps written data in the
// page cache, merges small writes into large WRITE requests and keeps file
// size and mtime itself. It trusts its cached size over what the
// filesystem reports, so it is off whenever someone else may change
// CIPHERDIR (-sharedstorage) and where nothing is written (read-only,
// reverse). The frontend must know (fusefrontend.Args.Writeback): the
// kernel then computes O_APPEND offsets itself and writes back through
// any writable handle. Linux only (writebackCache): what macFUSE does
// with the flag has not been seen here, and the frontend emulating
// O_APPEND is right whatever the kernel does.
func Writeback(p Params) bool {
	return writebackCache && !p.NoWriteCache && !p.SharedStorage && !p.ReadOnly && !p.Reverse
}

// ForwardLocks reports whether the mount asks the kernel to forward fcntl
// and flock locks (CAP_POSIX_LOCKS, CAP_FLOCK_LOCKS) to the frontend,
// which takes them on the backing ciphertext files
// (fusefrontend.Args.ForwardLocks). Only with -sharedstorage, where other
// mounts of CIPHERDIR, possibly on other machines, must see them. Without
// it the kernel keeps the locks itself, with its exact POSIX semantics,
// as on any local filesystem; they are then visible through this mount
// only. The read-only reverse view never forwards.
func ForwardLocks(p Params) bool {
	return p.SharedStorage && !p.Reverse
}

// AutoClassic says why -uring=auto serves this mount over /dev/fuse even
// where the kernel offers io_uring, or "" (fuseserve.Options.AutoClassic).
// With -sharedstorage, locks are forwarded and a lock wait, or a read
// waiting for another mount's lock, lasts as long as the holder likes;
// on io_uring each such wait holds a ring entry and its thread, on
// /dev/fuse only a goroutine. -uring=true still uses io_uring.
func AutoClassic(p Params) string {
	if ForwardLocks(p) {
		return "-sharedstorage (each waiting lock would hold a ring thread)"
	}
	return ""
}

// KernelOptions returns the -o items handed to fusermount.
func KernelOptions(p Params) []string {
	var o []string
	if p.ReadOnly {
		o = append(o, "ro")
	} else if p.RW {
		o = append(o, "rw")
	}
	o = append(o, pick(p.Suid, "suid", "nosuid"), pick(p.Dev, "dev", "nodev"))
	if p.NoExec {
		o = append(o, "noexec")
	} else if p.Exec {
		o = append(o, "exec")
	}
	if p.AllowOther {
		o = append(o, "default_permissions")
	}
	if p.Context != "" {
		o = append(o, "context="+p.Context)
	}
	ko := strings.Split(p.KernelOptions, ",")
	lastMode := -1
	for i, k := range ko {
		if atimeModes[k] {
			lastMode = i
		}
	}
	for i, k := range ko {
		// The generic options fusermount3 refuses are set after
		// mounting (Attrs); of the atime modes only the last counts,
		// and noatime goes to fusermount3, which takes it.
		_, generic := attrOptions[k]
		if k != "" && !generic && (!atimeModes[k] || i == lastMode && k == "noatime") {
			o = append(o, k)
		}
	}
	return o
}

// MountAttrs are mount options that fusermount3 refuses although the
// kernel knows them for every mount (fusermount3 3.14 takes only rw, ro,
// [no]suid, [no]dev, [no]exec, [a]sync, [no]atime and dirsync of the
// generic ones): fuseserve.Mount sets them on the new mount after fusermount3 made
// it, as mount(8) would have (fuseserve.Options.Attrs). The zero value
// changes nothing.
type MountAttrs struct {
	// Set and Clear are MOUNT_ATTR_* bits for mount_setattr(2), which
	// changes only these bits of the mount (nodiratime, nosymfollow, the
	// atime mode; setting an atime mode needs MOUNT_ATTR__ATIME in Clear).
	Set, Clear uint64
	// Lazytime sets (1) or clears (-1) the superblock's lazytime flag
	// with a remount; 0 leaves it.
	Lazytime int
	// Optional says that failing to apply is logged, not an error: the
	// options only change what the mount table shows (the atime modes,
	// whose policy the filesystem applies itself, as the kernel leaves
	// the atime of FUSE files to it).
	Optional bool
}

// Empty reports whether a changes nothing.
func (a MountAttrs) Empty() bool {
	return a.Set == 0 && a.Clear == 0 && a.Lazytime == 0
}

// atimeModes are the -ko options that choose the access time mode; the
// last one given counts. The forward frontend applies the mode itself
// (the kernel never updates the atime of FUSE files); on the mount it
// only shows in the mount table.
var atimeModes = map[string]bool{"noatime": true, "relatime": true, "strictatime": true, "atime": true}

// atimeMode returns the last access time mode in the -ko list ko, or "".
func atimeMode(ko string) string {
	mode := ""
	for _, k := range strings.Split(ko, ",") {
		if atimeModes[k] {
			mode = k
		}
	}
	return mode
}

// attrOption is a generic mount option that fusermount3 refuses and Attrs
// sets after mounting.
type attrOption struct {
	set, clear uint64
	lazytime   int
}

// attrOptions are the generic (not FUSE-specific) mount options that
// fusermount3 refuses, as mount attributes. "diratime", "symfollow" and
// "nolazytime" are the defaults of a new mount; they matter only to undo an
// earlier option of the same list.
var attrOptions = map[string]attrOption{
	"nodiratime":  {set: mountAttrNodiratime},
	"diratime":    {clear: mountAttrNodiratime},
	"nosymfollow": {set: mountAttrNosymfollow},
	"symfollow":   {clear: mountAttrNosymfollow},
	"lazytime":    {lazytime: 1},
	"nolazytime":  {lazytime: -1},
}

// Attrs returns the mount options of -ko that fusermount3 refuses (see
// MountAttrs), for fuseserve.Options.Attrs: nodiratime,
// nosymfollow and lazytime (with their opposites), and strictatime. The
// last of each pair wins. They need root: as another user, the atime
// options (which the frontend applies anyway) are left out of the mount
// table, and nosymfollow and lazytime fail the mount.
func Attrs(p Params) MountAttrs {
	var a MountAttrs
	for _, k := range strings.Split(p.KernelOptions, ",") {
		opt, ok := attrOptions[k]
		if !ok {
			continue
		}
		a.Set = a.Set&^opt.clear | opt.set
		a.Clear = a.Clear&^opt.set | opt.clear
		if opt.lazytime != 0 {
			a.Lazytime = opt.lazytime
		}
	}
	// The defaults of a new mount need no call.
	a.Clear &^= mountAttrNodiratime | mountAttrNosymfollow
	if a.Lazytime < 0 {
		a.Lazytime = 0
	}
	if atimeMode(p.KernelOptions) == "strictatime" {
		a.Set |= mountAttrStrictatime
		a.Clear |= mountAttrAtime
	}
	// nosymfollow and lazytime change what the kernel does on the
	// mount: not setting them must fail the mount.
	a.Optional = a.Set&mountAttrNosymfollow == 0 && a.Lazytime == 0
	return a
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// FsType is the FUSE subtype shown by mount(8): fuse.gocryptfs or, in
// reverse mode, fuse.gocryptfs-reverse.
func FsType(reverse bool) string {
	if reverse {
		return "gocryptfs-reverse"
	}
	return "gocryptfs"
}

// Build returns the go-fuse options for p. The caller sets RootStableAttr
// from the frontend (RootStableAttr of either frontend): the root shows
// the inode number of the backing root, as every other directory shows
// its own; go-fuse gives the root node ID 1 whatever its inode number.
func Build(p Params) *fs.Options {
	timeout := CacheTimeout
	if p.SharedStorage {
		timeout = 0
	}
	fsname := p.FsName
	if fsname == "" {
		fsname = p.CipherDir
	}
	var caps uint64
	if Writeback(p) {
		// DIRECT_IO_ALLOW_MMAP: files created while CIPHERDIR is
		// almost full are opened write-through (FOPEN_DIRECT_IO,
		// fusefrontend/fullfs.go) and must still allow shared mmap.
		caps |= fuse.CAP_WRITEBACK_CACHE | fuse.CAP_DIRECT_IO_ALLOW_MMAP
	}
	if !p.ReadOnly && !p.Reverse {
		// The forward frontend clears set-id bits on unprivileged
		// writes and truncates itself, so the kernel need not ask for
		// security.capability before every write(2).
		caps |= capHandleKillprivV2
	}
	o := &fs.Options{
		MountOptions: fuse.MountOptions{
			ExtraCapabilities: caps,
			AllowOther:        p.AllowOther,
			Options:           KernelOptions(p),
			MaxWrite:          MaxWrite,
			FsName:            fsname,
			Name:              FsType(p.Reverse),
			Debug:             p.Debug,
			SyncRead:          p.SerializeReads,
			EnableAcl:         p.ACL,
			// See ForwardLocks.
			EnableLocks: ForwardLocks(p),
			// READ replies are decrypted (or encrypted) bytes, never a
			// file range go-fuse could splice; its splice attempt would
			// cost two extra system calls per reply.
			DisableSplice: true,
		},
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		// Show the real permission bits, also 000.
		NullPermissions: true,
	}
	if !p.Reverse {
		// File handles (name_to_handle_at, NFS export): node IDs are
		// the inode numbers the forward frontend shows, which stay
		// valid across forgetting and remounts, and the kernel's
		// export support makes it ask the frontend for unknown node
		// IDs (fusefrontend's LookupNode).
		o.ExternalNodeID = true
		o.ExtraCapabilities |= fuse.CAP_EXPORT_SUPPORT
		if p.ACL {
			// The frontend applies the umask itself, only where no
			// default ACL is inherited (fusefrontend/acl.go).
			o.ExtraCapabilities |= fuse.CAP_DONT_MASK
		}
	}
	return o
}

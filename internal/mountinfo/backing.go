package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/conflictname"
)

// Locks says whether byte-range locks work between machines, which
// -sharedstorage relies on; main warns with it at -init and at mount
// time.
//
// What each filesystem documents:
//
//   - NFSv4: locks are part of the protocol (RFC 7530 section 9); NFSv3
//     needs the NLM lock manager (lockd/statd), usually running. A mount
//     with "nolock" or "local_lock=..." keeps locks local: detected from
//     the mount options.
//   - SMB/CIFS: byte-range locks are part of the protocol; the Linux
//     client sends them unless mounted with "nobrl".
//   - CephFS (kernel client and ceph-fuse) and GlusterFS: distributed
//     POSIX locks.
//   - sshfs: SFTP has no locks; the kernel keeps them local to the mount.
//   - 9p, s3fs, rclone and other FUSE filesystems: no (or unknown)
//     distributed locking.
//
// Local filesystems enforce locks between all mounts of this machine.
type Locks uint8

const (
	// LocksLocal: a local filesystem; locks work between all mounts of
	// this machine, and no other machine can reach it.
	LocksLocal Locks = iota
	// LocksShared: a network filesystem that enforces locks between
	// machines.
	LocksShared
	// LocksNotShared: a network filesystem whose locks stay on each
	// machine (sshfs, an NFS mount with nolock, SMB with nobrl).
	LocksNotShared
	// LocksUnknown: a network or FUSE filesystem this package does not
	// know.
	LocksUnknown
)

// Info describes the filesystem holding a path.
type Info struct {
	// Name is a short name such as "nfs", "cifs", "fuse.sshfs", "ext4".
	Name string
	// Network is true for filesystems that other machines may mount.
	Network bool
	// Locks says whether -sharedstorage's locks protect against other
	// machines.
	Locks Locks
}

// Filesystem magic numbers (statfs f_type, linux/magic.h).
const (
	magicTmpfs   = 0x01021994
	magicExt4    = 0xEF53 // also ext2 and ext3
	magicXFS     = 0x58465342
	magicBtrfs   = 0x9123683E
	magicF2FS    = 0xF2F52010
	magicNFS     = 0x6969
	magicSMB     = 0x517B
	magicCIFS    = 0xFF534D42
	magicSMB2    = 0xFE534D42
	magicCeph    = 0x00C36400
	magicFUSE    = 0x65735546
	magic9P      = 0x01021997
	magicAFS     = 0x5346414F
	magicOCFS2   = 0x7461636F
	magicGFS2    = 0x01161970
	magicLustre  = 0x0BD00BD0
	magicCoda    = 0x73757245
	magicNCP     = 0x564C
	magicOrangeF = 0x20030528
)

// Detect examines the filesystem that holds path (the user-given
// CIPHERDIR): its statfs type, and the type and options of its entry in
// the mount table (the mount whose mount point is the longest prefix of
// the resolved path), where that can be read.
func Detect(path string) (Info, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Info{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	m, _ := holdingPath(path)
	return classify(int64(st.Type), m.FSType, m.MountOptions+","+m.SuperOptions), nil
}

// classify maps a statfs magic number and, where known, the mount table's
// type and options to an Info.
func classify(magic int64, fstype, opts string) Info {
	has := func(o string) bool {
		for _, x := range strings.Split(opts, ",") {
			if x == o || strings.HasPrefix(x, o+"=") {
				return true
			}
		}
		return false
	}
	switch uint32(magic) {
	case magicNFS:
		if has("nolock") || has("local_lock") && !strings.Contains(opts, "local_lock=none") {
			return Info{"nfs", true, LocksNotShared}
		}
		return Info{"nfs", true, LocksShared}
	case magicSMB, magicCIFS, magicSMB2:
		if has("nobrl") {
			return Info{"cifs", true, LocksNotShared}
		}
		return Info{"cifs", true, LocksShared}
	case magicCeph:
		return Info{"ceph", true, LocksShared}
	case magicOCFS2, magicGFS2:
		return Info{nameOr(fstype, "cluster"), true, LocksShared}
	case magicLustre:
		return Info{"lustre", true, LocksShared}
	case magic9P:
		return Info{"9p", true, LocksNotShared}
	case magicAFS, magicCoda, magicNCP, magicOrangeF:
		return Info{nameOr(fstype, "network"), true, LocksUnknown}
	case magicFUSE:
		switch fstype {
		case "fuse.sshfs":
			return Info{fstype, true, LocksNotShared}
		case "fuse.glusterfs", "fuse.ceph-fuse", "fuse.ceph":
			return Info{fstype, true, LocksShared}
		case "fuse.gocryptfs", "fuse.gocryptfs-reverse":
			// Locks are forwarded to the filesystem below, which
			// decides; treat like an unknown one.
			return Info{fstype, false, LocksUnknown}
		}
		return Info{nameOr(fstype, "fuse"), true, LocksUnknown}
	}
	return Info{nameOr(fstype, fmt.Sprintf("0x%x", uint32(magic))), false, LocksLocal}
}

// CloseIsNoop reports whether on the filesystem of statfs type fType
// closing a descriptor (one that is not the file's last) does nothing but
// release it: the local filesystems tmpfs, ext2/3/4, XFS, Btrfs and F2FS.
// A network filesystem (NFS, SMB, FUSE) uses the close as its
// close-to-open flush point and reports write errors there, and any
// filesystem not listed may do the same.
func CloseIsNoop(fType int64) bool {
	switch uint32(fType) {
	case magicTmpfs, magicExt4, magicXFS, magicBtrfs, magicF2FS:
		return true
	}
	return false
}

// IsFUSE reports whether statfs type fType is that of a FUSE mount.
func IsFUSE(fType int64) bool {
	return uint32(fType) == magicFUSE
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SyncFolder returns the path of a sync tool's own file (conflictname.
// IsToolFile: Syncthing's ".stfolder", Dropbox's ".dropbox", Nextcloud's
// sync journal, ...) found in dir or one of its parent directories, or ""
// if there is none.
func SyncFolder(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if ents, err := os.ReadDir(d); err == nil {
			for _, e := range ents {
				if conflictname.IsToolFile(e.Name()) {
					return filepath.Join(d, e.Name())
				}
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

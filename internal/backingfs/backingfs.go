// Package backingfs tells what kind of filesystem a CIPHERDIR lives on and
// what that means when several machines use it: whether it is a network
// filesystem, whether byte-range locks (which -sharedstorage relies on)
// are enforced between machines, and whether the directory is a folder
// that a sync tool (Syncthing, Dropbox, Nextcloud, ...) copies between
// machines. main uses it to warn at -init and at mount time.
//
// Lock behaviour between machines, as documented by each filesystem:
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
package backingfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/conflictname"
)

// Locks says whether byte-range locks work between machines.
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

// Detect examines the filesystem that holds path.
func Detect(path string) (Info, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Info{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	fstype, opts := mountEntry(path)
	return classify(int64(st.Type), fstype, opts), nil
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

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mountEntry returns the type and options (super and mount options) of
// the mount holding path, from /proc/self/mountinfo: the last mount whose
// mount point is a prefix of the resolved path. Empty strings if unknown.
func mountEntry(path string) (fstype, opts string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	best := -1
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		mp, typ, o, ok := parseMountinfo(s.Text())
		if !ok || !within(abs, mp) || len(mp) < best {
			continue
		}
		best, fstype, opts = len(mp), typ, o
	}
	return fstype, opts
}

// parseMountinfo parses one line of /proc/self/mountinfo (proc(5)): field
// 5 is the mount point, then optional fields up to "-", then the type, the
// source and the super options; field 6 holds the mount options.
func parseMountinfo(line string) (mountPoint, fstype, opts string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return "", "", "", false
	}
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+3 >= len(f) {
		return "", "", "", false
	}
	return unescape(f[4]), f[sep+1], f[5] + "," + f[sep+3], true
}

// unescape decodes the octal escapes (\040 for space, ...) of mountinfo.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
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

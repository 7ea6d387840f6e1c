package mountinfo

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMagics: the statfs types are those of the kernel headers (as
// x/sys/unix has them), also above 2^31, where the type of f_type is
// signed on some architectures.
func TestMagics(t *testing.T) {
	for _, m := range []int64{unix.TMPFS_MAGIC, unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC} {
		if !CloseIsNoop(m) || !CloseIsNoop(int64(int32(uint32(m)))) {
			t.Errorf("CloseIsNoop(%#x) = false", m)
		}
	}
	for _, m := range []int64{unix.FUSE_SUPER_MAGIC, unix.NFS_SUPER_MAGIC, unix.PROC_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC, 0} {
		if CloseIsNoop(m) {
			t.Errorf("CloseIsNoop(%#x) = true", m)
		}
	}
	if !IsFUSE(unix.FUSE_SUPER_MAGIC) || IsFUSE(unix.EXT4_SUPER_MAGIC) {
		t.Error("IsFUSE")
	}
	for m, want := range map[int64]string{unix.NFS_SUPER_MAGIC: "nfs", unix.CIFS_SUPER_MAGIC: "cifs", unix.SMB2_SUPER_MAGIC: "cifs",
		unix.CEPH_SUPER_MAGIC: "ceph", unix.V9FS_MAGIC: "9p"} {
		if got := classify(m, "", ""); got.Name != want || !got.Network {
			t.Errorf("classify(%#x) = %+v, want network %s", m, got, want)
		}
	}
}

package mountinfo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		magic        int64
		fstype, opts string
		want         Info
	}{
		{0xEF53, "ext4", "rw,relatime", Info{"ext4", false, LocksLocal}},
		{0x01021994, "tmpfs", "rw", Info{"tmpfs", false, LocksLocal}},
		{magicNFS, "nfs4", "rw,vers=4.2", Info{"nfs", true, LocksShared}},
		{magicNFS, "nfs", "rw,vers=3,nolock", Info{"nfs", true, LocksNotShared}},
		{magicNFS, "nfs", "rw,vers=3,local_lock=all", Info{"nfs", true, LocksNotShared}},
		{magicNFS, "nfs", "rw,vers=3,local_lock=none", Info{"nfs", true, LocksShared}},
		{magicSMB2, "cifs", "rw,vers=3.1.1", Info{"cifs", true, LocksShared}},
		{magicCIFS, "cifs", "rw,nobrl", Info{"cifs", true, LocksNotShared}},
		{magicCeph, "ceph", "rw", Info{"ceph", true, LocksShared}},
		{magicFUSE, "fuse.sshfs", "rw,user_id=0", Info{"fuse.sshfs", true, LocksNotShared}},
		{magicFUSE, "fuse.glusterfs", "rw", Info{"fuse.glusterfs", true, LocksShared}},
		{magicFUSE, "fuse.rclone", "rw", Info{"fuse.rclone", true, LocksUnknown}},
		{magicFUSE, "", "", Info{"fuse", true, LocksUnknown}},
		{magic9P, "9p", "rw", Info{"9p", true, LocksNotShared}},
	}
	for _, c := range cases {
		if got := classify(c.magic, c.fstype, c.opts); got != c.want {
			t.Errorf("classify(%#x, %q, %q) = %+v, want %+v", c.magic, c.fstype, c.opts, got, c.want)
		}
	}
}

// TestHolding: the mount holding a path is the one with the longest
// mount point above it, the topmost of those; Detect takes its type and
// both option lists from it.
func TestHolding(t *testing.T) {
	const info = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 98:0 /mnt1 /mnt/with\040space rw,noatime master:1 - fuse.sshfs user@127.0.0.1:/x rw,user_id=0
37 22 0:36 / /mnt/x rw - tmpfs tmpfs rw
38 37 0:37 / /mnt/x rw - nfs srv:/e rw,vers=3,nolock
`
	mounts := mustParse(t, info)
	for _, c := range []struct {
		path string
		id   int
	}{
		{"/", 22}, {"/mnt", 22}, {"/mnt/with space", 36}, {"/mnt/with space/a/b", 36},
		{"/mnt/with", 22}, {"/mnt/x/y", 38}, {"/mnt/xy", 22},
	} {
		if m, ok := holding(mounts, c.path); !ok || m.ID != c.id {
			t.Errorf("%s: held by %+v (%v), want mount %d", c.path, m, ok, c.id)
		}
	}
	m, _ := holding(mounts, "/mnt/with space")
	if m.FSType != "fuse.sshfs" || m.MountOptions+","+m.SuperOptions != "rw,noatime,rw,user_id=0" {
		t.Errorf("got %+v", m)
	}
	if _, ok := holding(nil, "/"); ok {
		t.Error("a path held by no mount of an empty table")
	}
}

// TestDetectLocal: a temp dir is on a local filesystem (tmpfs or a disk)
// as far as this package knows, and the mount table lookup finds its type.
func TestDetectLocal(t *testing.T) {
	info, err := Detect(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if info.Network || info.Locks != LocksLocal || info.Name == "" {
		t.Errorf("temp dir: %+v", info)
	}
	if _, err := Detect("/nonexistent/x"); err == nil {
		t.Error("no error for a missing path")
	}
}

func TestSyncFolder(t *testing.T) {
	for _, marker := range []string{".stfolder", ".stignore", ".dropbox", ".sync", ".owncloudsync.log", "._sync_abc123.db", ".sync_0f1e.db"} {
		root := t.TempDir()
		deep := filepath.Join(root, "a", "cipher")
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := SyncFolder(deep); got != "" {
			t.Fatalf("%s: found %q before planting the marker", marker, got)
		}
		p := filepath.Join(root, marker)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := SyncFolder(deep); got != p {
			t.Errorf("marker %s: SyncFolder = %q, want %q", marker, got, p)
		}
	}
}

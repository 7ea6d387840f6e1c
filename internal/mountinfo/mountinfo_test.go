package mountinfo

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const info = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /mnt/with\040space rw,nosuid - fuse.gocryptfs /c\134d rw,user_id=0
broken line
41 22 0:36 / /mnt/x rw - tmpfs tmpfs rw
`
	got, err := Parse(strings.NewReader(info))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{ID: 22, MountPoint: "/", MountOptions: "rw,relatime", FSType: "ext4", Source: "/dev/sda1", SuperOptions: "rw"},
		{ID: 40, MountPoint: "/mnt/with space", MountOptions: "rw,nosuid", FSType: "fuse.gocryptfs", Source: `/c\d`, SuperOptions: "rw,user_id=0"},
		{ID: 41, MountPoint: "/mnt/x", MountOptions: "rw", FSType: "tmpfs", Source: "tmpfs", SuperOptions: "rw"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if Unescape(`/a\040b\011c\012d\134e`) != "/a b\tc\nd\\e" {
		t.Error("the kernel's escapes must be undone")
	}
	if Unescape(`a\04`) != `a\04` || Unescape(`\999`) != `\999` || Unescape(`\400`) != `\400` {
		t.Error("incomplete or invalid escapes must stay as they are")
	}
}

func TestRead(t *testing.T) {
	ms, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.MountPoint == "/" {
			return
		}
	}
	t.Errorf("no root mount in %+v", ms)
}

// TestMountedAt: the topmost mount on a directory, and only on exactly
// that directory.
func TestMountedAt(t *testing.T) {
	const info = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /mnt/with\040space rw,nosuid - fuse.gocryptfs /c rw,user_id=0
41 22 0:36 / /mnt/x rw - tmpfs tmpfs rw
42 41 0:37 / /mnt/x rw - fuse.gocryptfs /c2 rw
`
	mounts := mustParse(t, info)
	for _, c := range []struct {
		dir    string
		fstype string
		ok     bool
	}{
		{"/", "ext4", true},
		{"/mnt/with space", "fuse.gocryptfs", true},
		{"/mnt/x", "fuse.gocryptfs", true},
		{"/mnt", "", false},
		{"/mnt/with", "", false},
	} {
		m, ok := mountedAt(mounts, c.dir)
		if m.FSType != c.fstype || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.dir, m.FSType, ok, c.fstype, c.ok)
		}
	}
	if _, ok := IsMountPoint("/"); !ok {
		t.Error("/ is no mount point")
	}
	if m, ok := IsMountPoint(t.TempDir()); ok {
		t.Errorf("a fresh temp dir is mounted: %+v", m)
	}
}

// mustParse parses the mountinfo text info.
func mustParse(t *testing.T, info string) []Mount {
	t.Helper()
	mounts, err := Parse(strings.NewReader(info))
	if err != nil {
		t.Fatal(err)
	}
	return mounts
}

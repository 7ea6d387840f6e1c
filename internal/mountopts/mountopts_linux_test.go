package mountopts

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttrs: the generic mount options that fusermount3 refuses are not
// handed to it but set after mounting (Attrs), the last of each pair
// winning; of the atime modes only the last counts, and only noatime goes
// to fusermount3. Failing to set nosymfollow or lazytime fails the mount;
// the rest only shows in the mount table.
func TestAttrs(t *testing.T) {
	const atimeMask = unix.MOUNT_ATTR__ATIME
	for _, c := range []struct {
		ko         string
		fusermount string // the -ko part of the fusermount3 options
		want       MountAttrs
	}{
		{"", "", MountAttrs{Optional: true}},
		{"noexec,nodiratime", "noexec", MountAttrs{Set: unix.MOUNT_ATTR_NODIRATIME, Optional: true}},
		{"nodiratime,diratime", "", MountAttrs{Optional: true}},
		{"nosymfollow", "", MountAttrs{Set: unix.MOUNT_ATTR_NOSYMFOLLOW}},
		{"nosymfollow,symfollow", "", MountAttrs{Optional: true}},
		{"lazytime", "", MountAttrs{Lazytime: 1}},
		{"lazytime,nolazytime", "", MountAttrs{Optional: true}},
		{"noatime", "noatime", MountAttrs{Optional: true}},
		{"noatime,relatime", "", MountAttrs{Optional: true}},
		{"noatime,strictatime", "", MountAttrs{Set: unix.MOUNT_ATTR_STRICTATIME, Clear: atimeMask, Optional: true}},
		{"strictatime,atime", "", MountAttrs{Optional: true}},
		{"strictatime,nodiratime,sync", "sync", MountAttrs{Set: unix.MOUNT_ATTR_STRICTATIME | unix.MOUNT_ATTR_NODIRATIME, Clear: atimeMask, Optional: true}},
	} {
		p := Params{CipherDir: "/c", KernelOptions: c.ko}
		if got := Attrs(p); got != c.want {
			t.Errorf("-ko %q: Attrs %+v, want %+v", c.ko, got, c.want)
		}
		got := strings.TrimPrefix(strings.Join(KernelOptions(p), ","), "nosuid,nodev")
		if got = strings.TrimPrefix(got, ","); got != c.fusermount {
			t.Errorf("-ko %q: fusermount3 gets %q, want %q", c.ko, got, c.fusermount)
		}
	}
}

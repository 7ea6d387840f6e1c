package main

import (
	"strings"
	"testing"

	"gocryptfs/internal/mountinfo"
)

func TestMountedAt(t *testing.T) {
	const info = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /mnt/with\040space rw,nosuid - fuse.gocryptfs /c rw,user_id=0
41 22 0:36 / /mnt/x rw - tmpfs tmpfs rw
42 41 0:37 / /mnt/x rw - fuse.gocryptfs /c2 rw
`
	cases := []struct {
		dir    string
		fstype string
		ok     bool
	}{
		{"/", "ext4", true},
		{"/mnt/with space", "fuse.gocryptfs", true},
		{"/mnt/x", "fuse.gocryptfs", true},
		{"/mnt", "", false},
		{"/mnt/with", "", false},
	}
	for _, c := range cases {
		mounts, err := mountinfo.Parse(strings.NewReader(info))
		if err != nil {
			t.Fatal(err)
		}
		fstype, ok := mountedAt(mounts, c.dir)
		if fstype != c.fstype || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.dir, fstype, ok, c.fstype, c.ok)
		}
	}
}

// TestRedactedArgs: -d logs the command line without the master key.
func TestRedactedArgs(t *testing.T) {
	in := []string{"gocryptfs", "-masterkey", "aa-bb", "--masterkey=cc", "-o", "ro,masterkey=dd,fg", "c", "m"}
	want := "gocryptfs -masterkey *** --masterkey=*** -o ro,masterkey=***,fg c m"
	if got := strings.Join(redactedArgs(in), " "); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

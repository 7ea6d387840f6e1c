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
	want := []Mount{{"/", "ext4", "/dev/sda1", 22}, {"/mnt/with space", "fuse.gocryptfs", `/c\d`, 40}, {"/mnt/x", "tmpfs", "tmpfs", 41}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if Unescape(`a\04`) != `a\04` || Unescape(`\999`) != `\999` {
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

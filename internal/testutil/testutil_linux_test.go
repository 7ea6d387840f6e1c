package testutil

import (
	"strings"
	"testing"
)

func TestMounts(t *testing.T) {
	if !IsMounted("/") || !strings.Contains(MountLine("/"), " / ") {
		t.Errorf("/ is not mounted: %q", MountLine("/"))
	}
	if IsMounted(t.TempDir()) {
		t.Error("a fresh temp dir is mounted")
	}
	if got := mountsUnescaper.Replace(`/a\040b\011c\134d`); got != "/a b\tc\\d" {
		t.Errorf("unescape: %q", got)
	}
	UnmountDir(t, t.TempDir()) // not mounted: nothing to do
}

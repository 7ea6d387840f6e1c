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
	UnmountDir(t, t.TempDir()) // not mounted: nothing to do
}

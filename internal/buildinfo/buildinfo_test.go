package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

// The unstamped test binary: the date placeholder, and a version from the
// toolchain or the build.bash hint, never empty.
func TestUnstamped(t *testing.T) {
	if buildDate != "0000-00-00" {
		t.Errorf("buildDate = %q", buildDate)
	}
	if !strings.HasPrefix(Version(), "v0.0.0-") {
		t.Errorf("Version() = %q, want v0.0.0-...", Version())
	}
	for _, c := range []struct{ suffix, want string }{
		{"", "0000-00-00 " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{" -race", "0000-00-00 " + runtime.Version() + " -race " + runtime.GOOS + "/" + runtime.GOARCH},
	} {
		if got := Trailer(c.suffix); got != c.want {
			t.Errorf("Trailer(%q) = %q, want %q", c.suffix, got, c.want)
		}
	}
}

func TestStamped(t *testing.T) {
	defer func(v, d string) { gitVersion, buildDate = v, d }(gitVersion, buildDate)
	gitVersion, buildDate = "v2.9.9", "2001-02-03"
	if Version() != "v2.9.9" || buildDate != "2001-02-03" || !strings.HasPrefix(Trailer(""), "2001-02-03 go") {
		t.Errorf("stamped: %q %q %q", Version(), buildDate, Trailer(""))
	}
}

// go-fuse is not linked into a test binary of this package, so its version
// is unknown here; the binaries' tests check the real value.
func TestModuleVersion(t *testing.T) {
	if got := ModuleVersion("example.com/not/linked"); got != "[unknown]" {
		t.Errorf("ModuleVersion = %q", got)
	}
}

package buildinfo

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// The release in VERSION is a plain v2 release version: scripts parse
// "gocryptfs v2.", and the on-disk format is that of gocryptfs v2.
func TestRelease(t *testing.T) {
	if !regexp.MustCompile(`^v2\.[0-9]+\.[0-9]+$`).MatchString(Release()) {
		t.Errorf("Release() = %q, want v2.X.Y", Release())
	}
	if strings.Count(releaseFile, "\n") > 1 {
		t.Errorf("VERSION has more than one line: %q", releaseFile)
	}
}

// The unstamped test binary: the date placeholder, and the release with
// "-dev" (a plain "go build" used to say v0.0.0-dev-HASH).
func TestUnstamped(t *testing.T) {
	if buildDate != "0000-00-00" {
		t.Errorf("buildDate = %q", buildDate)
	}
	if !strings.HasPrefix(Version(), Release()+"-dev") {
		t.Errorf("Version() = %q, want %s-dev...", Version(), Release())
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

func TestVCSSuffix(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "+g0123456"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "0123456789abcdef"}}, "+g0123456.dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "false"}, {Key: "vcs.revision", Value: "0123456789abcdef"}}, "+g0123456"},
	} {
		if got := vcsSuffix(c.settings); got != c.want {
			t.Errorf("vcsSuffix(%v) = %q, want %q", c.settings, got, c.want)
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

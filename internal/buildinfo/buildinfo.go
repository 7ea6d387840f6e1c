// Package buildinfo is the version and build date of the gocryptfs and
// gocryptfs-xray binaries, shared by both -version lines. build.bash stamps
// them with
//
//	-ldflags "-X gocryptfs/internal/buildinfo.gitVersion=… -X gocryptfs/internal/buildinfo.buildDate=…"
//
// (the version from version.bash). The release version itself is the file
// VERSION of this package, which the release process bumps; it is
// embedded, so that a binary built with plain "go build" still reports a
// version of the right release line. The versions of linked modules come
// from the build information the Go toolchain records.
package buildinfo

import (
	_ "embed"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Written only by the linker (-X), never at run time.
var (
	gitVersion = ""
	buildDate  = "0000-00-00"
)

//go:embed VERSION
var releaseFile string

// GoFuseModule is the module path of the FUSE library.
const GoFuseModule = "github.com/hanwen/go-fuse/v2"

// releaseTag is the shape of a release version ("v2.5.0").
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// Release returns the release version in the file VERSION, e.g. "v2.5.0":
// the version being prepared, or released on a tagged commit.
func Release() string { return strings.TrimSpace(releaseFile) }

// Version returns the version this binary reports (and new configs record
// as Creator): the stamped one (version.bash: vX.Y.Z, vX.Y.Z-N-gHASH or
// vX.Y.Z-dev+N.gHASH), else the release tag the Go toolchain recorded
// for the main module, else Release() with "-dev" and, when the toolchain
// recorded it, "+gHASH" (".dirty" for uncommitted changes). Every form
// starts with "v" and the major version, for scripts that parse
// "gocryptfs v2.".
func Version() string {
	if gitVersion != "" {
		return gitVersion
	}
	v := Release() + "-dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if mv := bi.Main.Version; releaseTag.MatchString(mv) && sameMajor(mv, Release()) {
			return mv // built exactly at a release tag
		}
		v += vcsSuffix(bi.Settings)
	}
	return v
}

// sameMajor reports whether the versions a and b ("vX.Y.Z") have the same
// major version X.
func sameMajor(a, b string) bool {
	ma, _, _ := strings.Cut(a, ".")
	mb, _, _ := strings.Cut(b, ".")
	return ma == mb
}

// vcsSuffix is "+gHASH" (7 digits of the commit), with ".dirty" for a
// modified tree, from the VCS settings the Go toolchain recorded; "" when
// it recorded none.
func vcsSuffix(settings []debug.BuildSetting) string {
	rev, dirty := "", ""
	for _, s := range settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 7:
			rev = s.Value[:7]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = ".dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return "+g" + rev + dirty
}

// ModuleVersion returns the version of the module path linked into the
// binary (its replacement's, if replaced), or "[unknown]".
func ModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "[unknown]"
}

// Trailer is the end that every -version line shares: the build date, the
// Go version with goSuffix appended (" -race" for a race build), and
// GOOS/GOARCH, e.g. "2024-01-02 go1.26.8 linux/amd64".
func Trailer(goSuffix string) string {
	return buildDate + " " + runtime.Version() + goSuffix + " " + runtime.GOOS + "/" + runtime.GOARCH
}

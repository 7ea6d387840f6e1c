// Package buildinfo is the version and build date of the gocryptfs and
// gocryptfs-xray binaries, shared by both -version lines. build.bash stamps
// them with
//
//	-ldflags "-X gocryptfs/internal/buildinfo.gitVersion=… -X gocryptfs/internal/buildinfo.buildDate=…"
//
// and the versions of linked modules come from the build information the
// Go toolchain records.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Written only by the linker (-X), never at run time.
var (
	gitVersion = ""
	buildDate  = "0000-00-00"
)

// GoFuseModule is the module path of the FUSE library.
const GoFuseModule = "github.com/hanwen/go-fuse/v2"

// Version returns the stamped version (version.bash: vX.Y.Z[-N-gHASH]),
// else "v0.0.0-dev-" and the VCS revision the Go toolchain recorded, else
// the main module version, else "v0.0.0-unknown". Every form starts with
// "v" and a semantic version, for scripts that parse "gocryptfs vX".
func Version() string {
	if gitVersion != "" {
		return gitVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				return "v0.0.0-dev-" + s.Value[:7]
			}
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return "v0.0.0-unknown"
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

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"gocryptfs/internal/stupidgcm"
)

// Stamped by build.bash with -ldflags "-X main.gitVersion=... -X main.buildDate=...".
// They are only written by the linker, never at run time.
var (
	gitVersion = ""
	buildDate  = "0000-00-00"
)

// programVersion returns the version string: the stamped one, else the main
// module version recorded by the Go toolchain (derived from VCS), else a
// marker telling the user to build with build.bash.
func programVersion() string {
	if gitVersion != "" {
		return gitVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				return "dev-" + s.Value[:7]
			}
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return "[GitVersion not set - please compile using ./build.bash]"
}

// goFuseVersion returns the go-fuse module version linked into the binary.
func goFuseVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/hanwen/go-fuse/v2" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "[unknown]"
}

// versionLine is the -version output (CLI.md 6.4) without the newline.
func versionLine() string {
	v := programVersion()
	if !stupidgcm.Available {
		v += " without_openssl"
	}
	goVer := runtime.Version()
	if raceEnabled {
		goVer += " -race"
	}
	return fmt.Sprintf("gocryptfs %s; go-fuse %s; %s %s %s/%s",
		v, goFuseVersion(), buildDate, goVer, runtime.GOOS, runtime.GOARCH)
}

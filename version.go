package main

import (
	"fmt"

	"gocryptfs/internal/buildinfo"
	"gocryptfs/internal/cryptocore"
)

// programVersion is the version this binary reports, also recorded as the
// Creator of new configs.
func programVersion() string { return buildinfo.Version() }

// versionLine is the -version output (docs/cli.md 6.4) without the newline.
func versionLine() string {
	v := programVersion()
	if !cryptocore.BackendOpenSSL.Available() {
		v += " without_openssl"
	}
	race := ""
	if raceEnabled {
		race = " -race"
	}
	return fmt.Sprintf("gocryptfs %s; go-fuse %s; %s", v, buildinfo.ModuleVersion(buildinfo.GoFuseModule), buildinfo.Trailer(race))
}

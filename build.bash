#!/bin/bash
#
# Build ./gocryptfs (and ./gocryptfs-xray/gocryptfs-xray if that tool exists)
# with the version from version.bash (vX.Y.Z[-N-gHASH] from the latest tag,
# else vX.Y.Z-dev+N.gHASH from internal/buildinfo/VERSION)
# and the build date stamped in.
# Extra arguments go to "go build", e.g. ./build.bash -tags without_openssl
# or ./build.bash -race.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

GITVERSION=$(./version.bash)
# Reproducible builds: honour SOURCE_DATE_EPOCH if set.
BUILDDATE=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
# Both binaries read these from internal/buildinfo.
BI=gocryptfs/internal/buildinfo
LDFLAGS="-X $BI.gitVersion=$GITVERSION -X $BI.buildDate=$BUILDDATE"

go build -ldflags "$LDFLAGS" "$@" -o gocryptfs .
if [[ -d gocryptfs-xray ]] && compgen -G "gocryptfs-xray/*.go" >/dev/null; then
	go build -ldflags "$LDFLAGS" "$@" -o gocryptfs-xray/gocryptfs-xray ./gocryptfs-xray
fi
./gocryptfs -version

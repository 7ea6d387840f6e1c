#!/bin/bash
#
# Print the version build.bash stamps into the binaries, semantic-version
# shaped so that scripts parsing "gocryptfs vX.Y.Z" keep working:
#   vX.Y.Z             a tagged commit
#   vX.Y.Z-N-gHASH     N commits after the latest tag vX.Y.Z
#   ...-dirty          uncommitted changes in a git checkout
#   v0.0.0-0-gHASH     a git checkout without any reachable tag (shallow clone)
#   contents of VERSION  outside git (a release tarball ships that file)
#   v0.0.0-unknown     none of the above

set -euo pipefail
cd "$(dirname "$0")"

if v=$(git describe --tags --dirty --match 'v[0-9]*' 2>/dev/null); then
	echo "$v"
elif h=$(git rev-parse --short HEAD 2>/dev/null); then
	dirty=""
	git diff --quiet HEAD 2>/dev/null || dirty="-dirty"
	echo "v0.0.0-0-g$h$dirty"
elif [[ -s VERSION ]]; then
	head -n1 VERSION
else
	echo "v0.0.0-unknown"
fi

#!/bin/bash
#
# Print the version build.bash stamps into the binaries. Every form starts
# with "v2." (the major version of the on-disk format), so that scripts
# parsing "gocryptfs v2." keep working:
#   vX.Y.Z                   a commit tagged vX.Y.Z
#   vX.Y.Z-N-gHASH           N commits after the latest tag vX.Y.Z
#   R-dev+N.gHASH            a clone without tags (release tags do not travel
#                            with every clone): R is the release in
#                            internal/buildinfo/VERSION, N the commits since
#                            that file last changed (left out, "R-dev+gHASH",
#                            when a shallow clone lacks that commit)
#   ...-dirty / ....dirty    uncommitted changes
#   R                        outside git (a source tarball)
#   v0.0.0-unknown           none of the above
# A tag, when there is one, wins. The release process bumps VERSION and
# tags the commit; a binary built with plain "go build" reads the same file
# (internal/buildinfo embeds it), so it is the one source of the release.

set -euo pipefail
cd "$(dirname "$0")"

vfile=internal/buildinfo/VERSION
release=""
if [[ -s $vfile ]]; then
	release=$(head -n1 "$vfile")
fi

if v=$(git describe --tags --dirty --match 'v[0-9]*' 2>/dev/null); then
	echo "$v"
elif h=$(git rev-parse --short HEAD 2>/dev/null); then
	dirty=""
	git diff --quiet HEAD 2>/dev/null || dirty=".dirty"
	n=""
	if c=$(git log -1 --format=%H -- "$vfile" 2>/dev/null) && [[ -n $c ]]; then
		n="$(git rev-list --count "$c..HEAD")."
	fi
	echo "${release:-v0.0.0}-dev+${n}g$h$dirty"
elif [[ -n $release ]]; then
	echo "$release"
else
	echo "v0.0.0-unknown"
fi

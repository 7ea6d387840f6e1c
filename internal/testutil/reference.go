package testutil

import (
	"os"
	"testing"
)

// ReferenceBin and ReferenceXray are the reference implementation's
// binaries from Debian's gocryptfs package (2.3), which install-deps.bash --test
// installs. The paths are absolute so that a gocryptfs found in PATH (an
// installed copy of ours) is never run in its place.
const (
	ReferenceBin  = "/usr/bin/gocryptfs"
	ReferenceXray = "/usr/bin/gocryptfs-xray"
)

// RequireReference fails the test (CI installs the reference, so its
// absence is a broken setup, not a reason to skip) when a reference binary
// is missing.
func RequireReference(t testing.TB) {
	t.Helper()
	for _, bin := range []string{ReferenceBin, ReferenceXray} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("reference gocryptfs missing (./install-deps.bash --test installs Debian's gocryptfs package): %v", err)
		}
	}
}

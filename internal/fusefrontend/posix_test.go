package fusefrontend

import (
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// posixKnownFailures lists go-fuse posixtest cases that cannot pass on
// this filesystem, with the reason. They are run anyway (so a fix shows
// up) but their failure does not fail the suite.
var posixKnownFailures = map[string]string{}

// TestPosix runs go-fuse's POSIX conformance suite, each case on a fresh
// mount (several cases expect an empty root directory).
func TestPosix(t *testing.T) {
	requireFuse(t)
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fn := posixtest.All[name]
		t.Run(name, func(t *testing.T) {
			tf := mountFS(t, testConfig{})
			fn(t, tf.mnt)
		})
	}
}

package fusefrontend

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"

	"gocryptfs/internal/testutil"
)

// TestPosix runs go-fuse's POSIX conformance suite, each case on a fresh
// mount (several cases expect an empty root directory). No case may skip.
// XAttrLarge stores an 8 KiB value, which ext4 (without the ea_inode
// feature) cannot hold even without encryption, so that case runs with
// CIPHERDIR on an XFS image. The suite runs once without kernel caching
// and once as the binary mounts by default, with the writeback cache.
func TestPosix(t *testing.T) {
	testutil.RequireFuse(t)
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, v := range []struct {
		name string
		cfg  testConfig
	}{
		{"nocache", testConfig{}},
		{"writeback", testConfig{timeouts: true, writeback: true}},
	} {
		t.Run(v.name, func(t *testing.T) {
			for _, name := range names {
				fn := posixtest.All[name]
				t.Run(name, func(t *testing.T) {
					var tf *testFS
					if name == "XAttrLarge" {
						cipherDir := filepath.Join(mountImage(t, "xfs", 320), "cipher")
						if err := os.Mkdir(cipherDir, 0o755); err != nil {
							t.Fatal(err)
						}
						tf = mountExisting(t, v.cfg, cipherDir, true)
					} else {
						tf = mountFS(t, v.cfg)
					}
					defer func() {
						// A posixtest case skips through t.Skip, which
						// ends it with runtime.Goexit.
						if t.Skipped() {
							t.Errorf("posixtest %s skipped", name)
						}
					}()
					fn(t, tf.mnt)
				})
			}
		})
	}
}

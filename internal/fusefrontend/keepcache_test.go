//go:build linux

package fusefrontend

import (
	"bytes"
	"os"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// TestKeepCacheChangedWhileOpen: the backing file changed (through a
// second mount) while a read-only handle that kept the cache was open.
// Its release must not record the changed state as what the page cache
// holds, or the next open would keep the stale cache.
func TestKeepCacheChangedWhileOpen(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	p := tf.path("k")
	mustWrite(t, p, pattern(20000, 1))
	mustRead(t, p)
	// Reopened unchanged: the cache is kept.
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	mustWrite(t, other.path("k"), pattern(20000, 2))
	f.Close()
	// RELEASE is asynchronous (over io_uring it travels in the
	// background queue and often arrives after the next OPEN, which
	// then rereads the header: contentio's TestOpenAfterOutsideRewrite).
	// What is checked here is that the release itself does not record
	// the changed state, so it must have happened before the reads.
	if !testutil.WaitFor(5*time.Second, func() bool { return tf.srv.OpenFileCount() == 0 }) {
		t.Fatal("RELEASE of the read-only handle never arrived")
	}
	for range 3 {
		if got := mustRead(t, p); !bytes.Equal(got, pattern(20000, 2)) {
			t.Fatal("changed file read from the stale page cache")
		}
	}
}

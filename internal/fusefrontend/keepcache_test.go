package fusefrontend

import (
	"bytes"
	"os"
	"testing"
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
	// RELEASE is asynchronous; any later open must see the new content,
	// also one that races with it.
	for range 3 {
		if got := mustRead(t, p); !bytes.Equal(got, pattern(20000, 2)) {
			t.Fatal("changed file read from the stale page cache")
		}
	}
}

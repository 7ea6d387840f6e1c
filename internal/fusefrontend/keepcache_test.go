package fusefrontend

import (
	"bytes"
	"os"
	"sync/atomic"
	"testing"
)

// countOps counts the requests of operation op that reach tf's frontend
// from now on.
func countOps(tf *testFS, op string) *atomic.Int64 {
	var n atomic.Int64
	hook := func(o string) {
		if o == op {
			n.Add(1)
		}
	}
	tf.rn.testHook.Store(&hook)
	return &n
}

// TestKeepCacheReadOnlyReopens: read-only handles that kept the page
// cache do not record the file's state again on release, and the cache
// stays kept across any number of reopens.
func TestKeepCacheReadOnlyReopens(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	reads := countOps(tf, "Read")
	p := tf.path("k")
	mustWrite(t, p, pattern(20000, 1))
	mustRead(t, p)
	before := reads.Load()
	for range 5 {
		if got := mustRead(t, p); !bytes.Equal(got, pattern(20000, 1)) {
			t.Fatal("content")
		}
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("unchanged file: %d READs on 5 reopens, want 0 (page cache kept)", n)
	}
}

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

// TestNoFlushReadOnly: without the writeback cache, closing a read-only
// handle sends no FLUSH (FOPEN_NOFLUSH); a writable handle's close still
// does, and its data reads back through another mount. FLUSH is kept
// answered (KeepFlush): on a local CIPHERDIR it is refused altogether.
func TestNoFlushReadOnly(t *testing.T) {
	cfg := testConfig{timeouts: true}
	cfg.args.KeepFlush = true
	tf := mountFS(t, cfg)
	p := tf.path("f")
	mustWrite(t, p, pattern(5000, 3))
	flushes := countOps(tf, "Flush")
	for range 3 {
		if got := mustRead(t, p); !bytes.Equal(got, pattern(5000, 3)) {
			t.Fatal("content")
		}
	}
	if n := flushes.Load(); n != 0 {
		t.Errorf("%d FLUSHes for 3 read-only closes, want 0", n)
	}
	mustWrite(t, p, pattern(7000, 4))
	if n := flushes.Load(); n == 0 {
		t.Error("no FLUSH for the close of a writable handle")
	}
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	if got := mustRead(t, other.path("f")); !bytes.Equal(got, pattern(7000, 4)) {
		t.Error("content through a second mount")
	}
}

//go:build testhooks

// The tests that need the test hooks (hooks_testhooks.go); test.bash runs
// them with -tags testhooks.

package fusefrontend

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestPanicRecovery injects a panic into one request: it must fail with
// EIO, be logged with a stack, and the mount must keep working.
func TestPanicRecovery(t *testing.T) {
	tf := mountFS(t, testConfig{})
	mustWrite(t, tf.path("f"), []byte("data"))
	var armed atomic.Bool
	hook := func(op string) {
		if op == "Getattr" && armed.CompareAndSwap(true, false) {
			panic("injected test panic")
		}
	}
	tf.rn.hooks.hook.Store(&hook)
	armed.Store(true)
	_, err := os.Stat(tf.path("f"))
	errIs(t, err, syscall.EIO, "stat with injected panic")
	if !strings.Contains(tf.logs.String(), "injected test panic") || !strings.Contains(tf.logs.String(), "goroutine") {
		t.Fatalf("panic not logged with stack:\n%s", tf.logs)
	}
	if b := mustRead(t, tf.path("f")); !bytes.Equal(b, []byte("data")) {
		t.Fatalf("after panic: %q", b)
	}
	if _, err := os.Stat(tf.path("f")); err != nil {
		t.Fatal(err)
	}
}

// TestWritebackKeepCache: a file reopened unchanged is served from the
// page cache (no READ reaches the filesystem); after another writer
// changed it through a second mount of CIPHERDIR, the new content is read.
func TestWritebackKeepCache(t *testing.T) {
	tf := mountFS(t, writebackCfg)
	var reads atomic.Int64
	hook := func(op string) {
		if op == "Read" {
			reads.Add(1)
		}
	}
	tf.rn.hooks.hook.Store(&hook)
	p := tf.path("k")
	mustWrite(t, p, pattern(20000, 5))
	mustRead(t, p)
	before := reads.Load()
	if got := mustRead(t, p); !bytes.Equal(got, pattern(20000, 5)) {
		t.Fatal("content")
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("unchanged file: %d READs on reopen, want 0 (page cache kept)", n)
	}
	// Another writer, same size: only the change check can notice.
	other := mountExisting(t, testConfig{}, tf.cipher, false)
	mustWrite(t, other.path("k"), pattern(20000, 6))
	if got := mustRead(t, p); !bytes.Equal(got, pattern(20000, 6)) {
		t.Fatal("changed file read from the stale page cache")
	}
}

// countOps counts the requests of operation op that reach tf's frontend
// from now on.
func countOps(tf *testFS, op string) *atomic.Int64 {
	var n atomic.Int64
	hook := func(o string) {
		if o == op {
			n.Add(1)
		}
	}
	tf.rn.hooks.hook.Store(&hook)
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

// TestNoFlushReadOnly: without the writeback cache, closing a read-only
// handle sends no FLUSH (FOPEN_NOFLUSH); a writable handle's close still
// does, and its data reads back through another mount. FLUSH is kept
// answered (keepFlush): on a local CIPHERDIR it is refused altogether.
func TestNoFlushReadOnly(t *testing.T) {
	cfg := testConfig{timeouts: true}
	cfg.keepFlush = true
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

// TestReaddirplusLookup: listing a directory answers the kernel's
// READDIRPLUS lookups from the listing (one fstatat per entry), and the
// attributes the kernel caches that way are those a regular Lookup gives:
// every entry is compared with an Lstat through a second mount of the same
// CIPHERDIR that never listed the directory. Covers a long name, a
// symlink (size is the decrypted target's length), a directory, a FIFO and
// a name that is reached only through -badname.
func TestReaddirplusLookup(t *testing.T) {
	for _, cfg := range []struct {
		name string
		cfg  testConfig
	}{
		{"diriv", testConfig{timeouts: true, badname: []string{"*"}}},
		{"plaintextnames", testConfig{timeouts: true, plaintextNames: true}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			tf := mountFS(t, cfg.cfg)
			if err := os.Mkdir(tf.path("d"), 0o755); err != nil {
				t.Fatal(err)
			}
			long := strings.Repeat("l", 200)
			mustWrite(t, tf.path("d/file"), []byte("hello"))
			mustWrite(t, tf.path("d/"+long), []byte("long"))
			if err := os.Symlink("some/target", tf.path("d/link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(tf.path("d/sub"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(tf.path("d/fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
			want := []string{"fifo", "file", "link", long, "sub"}
			if !cfg.cfg.plaintextNames {
				// An undecryptable backing name, shown with -badname.
				c, err := tf.rn.EncryptPath("d")
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, tf.cipher+"/"+c+"/garbage-name", nil)
			}
			// A second mount: its Lstat goes through Lookup only.
			other := mountExisting(t, cfg.cfg, tf.cipher, false)
			// A fresh view of d for the first mount: drop what the
			// kernel learned while the entries were created.
			if err := os.Rename(tf.path("d"), tf.path("e")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tf.path("e"), tf.path("d")); err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			counts := map[string]int{}
			hook := func(op string) {
				mu.Lock()
				counts[op]++
				mu.Unlock()
			}
			tf.rn.hooks.hook.Store(&hook)
			ents, err := os.ReadDir(tf.path("d"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if len(names) < len(want) {
				t.Fatalf("listing %q, want at least %q", names, want)
			}
			for _, name := range names {
				var st1, st2 syscall.Stat_t
				if err := syscall.Lstat(tf.path("d/"+name), &st1); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := syscall.Lstat(other.path("d/"+name), &st2); err != nil {
					t.Fatalf("%s through the second mount: %v", name, err)
				}
				if st1.Mode != st2.Mode || st1.Size != st2.Size || st1.Ino != st2.Ino || st1.Nlink != st2.Nlink ||
					st1.Mtim != st2.Mtim || st1.Uid != st2.Uid || st1.Blocks != st2.Blocks {
					t.Errorf("%s: readdirplus attributes %+v, lookup attributes %+v", name, st1, st2)
				}
			}
			tf.rn.hooks.hook.Store(nil)
			mu.Lock()
			defer mu.Unlock()
			if counts["ReaddirplusLookup"] != len(names) || counts["Lookup"] != 0 {
				t.Errorf("%d entries: %d listing lookups and %d regular lookups, want all from the listing (%v)",
					len(names), counts["ReaddirplusLookup"], counts["Lookup"], counts)
			}
		})
	}
}

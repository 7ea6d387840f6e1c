package fusefrontend

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

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
			tf.rn.testHook.Store(&hook)
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
			tf.rn.testHook.Store(nil)
			mu.Lock()
			defer mu.Unlock()
			if counts["ReaddirplusLookup"] != len(names) || counts["Lookup"] != 0 {
				t.Errorf("%d entries: %d listing lookups and %d regular lookups, want all from the listing (%v)",
					len(names), counts["ReaddirplusLookup"], counts["Lookup"], counts)
			}
		})
	}
}

// TestGetxattrFallbacks: getxattr answers from the regular backing name
// in one call, and still finds entries that are reached only through a
// fallback (here a -badname name) and missing attributes of existing ones.
func TestGetxattrFallbacks(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true, badname: []string{"*"}})
	mustWrite(t, tf.path("regular"), nil)
	mustWrite(t, tf.cipher+"/garbage-name", nil)
	ents, err := os.ReadDir(tf.mnt)
	if err != nil {
		t.Fatal(err)
	}
	bad := ""
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "garbage-name") {
			bad = e.Name()
		}
	}
	if bad == "" {
		t.Fatalf("no -badname entry in %v", ents)
	}
	buf := make([]byte, 64)
	for _, name := range []string{"regular", bad} {
		p := tf.path(name)
		if _, err := syscall.Getxattr(p, "user.a", buf); err != syscall.ENODATA {
			t.Errorf("%s: missing attribute: %v, want ENODATA", name, err)
		}
		if err := syscall.Setxattr(p, "user.a", []byte("v-"+name), 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := syscall.Getxattr(p, "user.a", buf)
		if err != nil || string(buf[:n]) != "v-"+name {
			t.Errorf("%s: %q, %v", name, buf[:n], err)
		}
	}
	if _, err := syscall.Getxattr(tf.path("nonexistent"), "user.a", buf); err != syscall.ENOENT {
		t.Errorf("nonexistent: %v, want ENOENT", err)
	}
}

//go:build linux

package fusefrontend

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountinfo"
)

// flushCases are the FLUSH modes a close-time test runs in: refused
// (the default on a local CIPHERDIR) and answered (keepFlush, as on a
// network filesystem).
func flushCases() []struct {
	name string
	cfg  testConfig
} {
	refused := writebackCfg
	kept := writebackCfg
	kept.keepFlush = true
	return []struct {
		name string
		cfg  testConfig
	}{{"refused", refused}, {"kept", kept}}
}

// localCipherDir reports whether dir is on a filesystem that gets FLUSH
// refused.
func localCipherDir(t *testing.T, dir string) bool {
	t.Helper()
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		t.Fatal(err)
	}
	return mountinfo.CloseIsNoop(int64(sfs.Type))
}

// TestFlushMode checks who gets FLUSH refused: a CIPHERDIR on a local
// filesystem, never -sharedstorage, never a filesystem
// outside the list, never a CIPHERDIR with a mount below it.
func TestFlushMode(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	local := localCipherDir(t, dir)
	if got := flushNeeded(Args{CipherDir: dir}, fd); got == local {
		t.Errorf("flushNeeded on a local=%v filesystem = %v", local, got)
	}
	if !flushNeeded(Args{CipherDir: dir, SharedStorage: true}, fd) {
		t.Error("-sharedstorage must keep FLUSH")
	}
	// procfs is no local data filesystem.
	pfd, err := unix.Open("/proc/self", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	if !flushNeeded(Args{CipherDir: "/proc/self"}, pfd) {
		t.Error("FLUSH refused for a CIPHERDIR on procfs")
	}
	// "/" has /proc mounted below it.
	if !hasMountsBelow("/") {
		t.Error("no mounts found below /")
	}
	if hasMountsBelow(dir) {
		t.Errorf("mounts found below the fresh directory %s", dir)
	}
	if !local {
		t.Logf("TMPDIR %s is not on a filesystem that refuses FLUSH; mount tests run with FLUSH", dir)
	}
}

// TestFlushCloseReleasesLock: a POSIX lock taken through a descriptor is
// gone after close(2), whether FLUSH is sent or not (the lock lives on the
// handle's backing fd and goes with RELEASE, which the kernel sends
// asynchronously after close returns, so the other side waits for it).
func TestFlushCloseReleasesLock(t *testing.T) {
	for _, c := range flushCases() {
		t.Run(c.name, func(t *testing.T) {
			tf := mountFS(t, c.cfg)
			p := tf.path("locked")
			mustWrite(t, p, []byte("data"))
			h1, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
			if err := unix.FcntlFlock(h1.Fd(), unix.F_SETLK, &lk); err != nil {
				t.Fatal(err)
			}
			h2, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			// The lock is held: an open-file-description lock through
			// another open conflicts with it.
			olk := unix.Flock_t{Type: unix.F_WRLCK}
			if err := unix.FcntlFlock(h2.Fd(), unix.F_OFD_SETLK, &olk); err == nil {
				t.Fatal("second lock granted while the first is held")
			}
			if _, err := h1.Write([]byte("more")); err != nil {
				t.Fatal(err)
			}
			if err := h1.Close(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				l := unix.Flock_t{Type: unix.F_WRLCK}
				done <- unix.FcntlFlock(h2.Fd(), unix.F_OFD_SETLKW, &l)
			}()
			// Not a timing assertion: a lock that is never released
			// would hang the test until go test's own timeout.
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("lock after close: %v", err)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the lock was not released after close")
			}
		})
	}
}

// TestFlushCloseWritesBack: data written through the writeback cache is
// in CIPHERDIR when close(2) returns, without fsync, FLUSH or not: a
// second, uncached mount reads it, and the backing file has its size.
func TestFlushCloseWritesBack(t *testing.T) {
	for _, c := range flushCases() {
		t.Run(c.name, func(t *testing.T) {
			tf := mountFS(t, c.cfg)
			if !c.cfg.keepFlush && localCipherDir(t, tf.cipher) && tf.rn.flush {
				t.Fatal("FLUSH answered on a local CIPHERDIR")
			}
			data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320000 bytes, partial last block
			f, err := os.Create(tf.path("wb"))
			if err != nil {
				t.Fatal(err)
			}
			// Small writes, which the page cache merges.
			for i := 0; i < len(data); i += 1000 {
				if _, err := f.Write(data[i:min(i+1000, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			cName, err := tf.rn.EncryptPath("wb")
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(tf.cipher, cName))
			if err != nil {
				t.Fatal(err)
			}
			if want := tf.rn.ce.PlainSizeToCipherSize(uint64(len(data))); uint64(st.Size()) != want {
				t.Errorf("backing size after close = %d, want %d", st.Size(), want)
			}
			if got := tf.reread(t, "wb"); !bytes.Equal(got, data) {
				t.Errorf("uncached mount reads %d bytes, want the %d written", len(got), len(data))
			}
		})
	}
}

//go:build linux

// (go-fuse's posixtest builds on Linux only: it uses O_DIRECT.)

package fusefrontend

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
	"golang.org/x/sys/unix"

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
				if name == "FcntlFlockLocksFile" {
					// go-fuse's case expects a process's F_SETLK
					// through a second open to conflict with its own
					// lock through the first: open-file-description
					// semantics, which POSIX locks do not have (the
					// kernel grants it; tests/cli TestLocksPOSIX).
					fn = ofdLocksFile
				}
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

// ofdLocksFile is go-fuse's FcntlFlockLocksFile with the semantics the
// kernel gives: a process's POSIX locks never conflict with each other
// across two opens, open-file-description locks through two opens do.
func ofdLocksFile(t *testing.T, mnt string) {
	p := filepath.Join(mnt, "test")
	f1, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	f2, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	lk := func(f *os.File, cmd int, typ int16) error {
		return unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: typ})
	}
	if err := lk(f1, unix.F_SETLK, unix.F_WRLCK); err != nil {
		t.Fatalf("F_SETLK: %v", err)
	}
	if err := lk(f2, unix.F_SETLK, unix.F_RDLCK); err != nil {
		t.Errorf("F_SETLK of the same process through a second open: %v, want success", err)
	}
	if err := lk(f1, unix.F_SETLK, unix.F_UNLCK); err != nil {
		t.Fatal(err)
	}
	if err := lk(f1, unix.F_OFD_SETLK, unix.F_WRLCK); err != nil {
		t.Fatalf("F_OFD_SETLK: %v", err)
	}
	if err := lk(f2, unix.F_OFD_SETLK, unix.F_RDLCK); err != unix.EAGAIN {
		t.Errorf("F_OFD_SETLK through a second open: %v, want EAGAIN", err)
	}
}

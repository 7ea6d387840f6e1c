package main

import (
	"bytes"
	"errors"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/fuseuring"
	"gocryptfs/internal/testutil"
)

// TestReadsReachDaemon: reading a file through the mount sends READ
// requests to the daemon, which go-fuse's loopback example, mounted by
// root, does not (the kernel reads the backing file by passthrough). The
// benchmark's "lo-nopt" column relies on it.
func TestReadsReachDaemon(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	orig, mnt := t.TempDir(), t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 8192)
	if err := os.WriteFile(filepath.Join(orig, "f"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	var trace testutil.SyncBuffer
	srv, err := mount(mnt, orig, log.New(&trace, "", 0))
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	got, err := os.ReadFile(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if trace.CountLines(": READ ") == 0 {
		t.Errorf("no READ request reached the daemon; trace:\n%s", trace.String())
	}
}

// TestReadsTravelTheRing: with -uring ("lo-uring" in benchmark.bash) the
// READ requests of a read through the mount reach the daemon through the
// io_uring ring entries, none through /dev/fuse.
func TestReadsTravelTheRing(t *testing.T) {
	testutil.RequireFuse(t)
	orig, mnt := t.TempDir(), t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 8192)
	if err := os.WriteFile(filepath.Join(orig, "f"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	var trace testutil.SyncBuffer
	restore := enableURing(t)
	srv, err := mountURing(mnt, orig, trace.Logger(slog.LevelDebug))
	// The kernel checks the parameter at INIT and registration only;
	// a connection that has io_uring keeps it.
	restore()
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		testutil.Unmount(t, mnt, srv.Unmount)
		srv.Wait()
	})
	got, err := os.ReadFile(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if trace.CountLines(`"fuse READ"`) == 0 {
		t.Errorf("no READ request reached the daemon; trace:\n%s", trace.String())
	}
	st := srv.Stats()
	if st.Transport != fuseserve.TransportURing || st.RingRequests == 0 {
		t.Errorf("transport %v (%s), %d ring requests; want io_uring", st.Transport, st.Reason, st.RingRequests)
	}
	if n := st.DevByOpcode[opRead]; n != 0 {
		t.Errorf("%d READ requests through /dev/fuse, want 0 (%v)", n, st.DevByOpcode)
	}
}

// opRead is FUSE_READ.
const opRead = 15

// enableURing sets the fuse module's enable_uring parameter to Y and
// returns the function that puts the old value back (also run at cleanup,
// idempotent). A kernel without the parameter has no FUSE over io_uring:
// the test skips.
func enableURing(t *testing.T) (restore func()) {
	t.Helper()
	old, err := os.ReadFile(fuseuring.ParamPath)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("kernel without FUSE over io_uring: no " + fuseuring.ParamPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fuseuring.ParamPath, []byte("Y"), 0); err != nil {
		t.Fatalf("enabling FUSE over io_uring: %v", err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := os.WriteFile(fuseuring.ParamPath, old, 0); err != nil {
				t.Errorf("restoring %s to %q: %v", fuseuring.ParamPath, old, err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"testing"

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

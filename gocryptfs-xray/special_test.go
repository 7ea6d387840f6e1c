package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// TestInspectNotRegular: a FIFO, a directory or a device node given as
// the file to inspect (a planted entry of CIPHERDIR) is refused at once
// with exit 1, without blocking in open or reading from it.
func TestInspectNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A block device no driver registers: opening it would fail with
	// ENXIO instead of the refusal, so it shows that it is not opened.
	blk := filepath.Join(t.TempDir(), "blk")
	if err := testutil.Mknod(blk, unix.S_IFBLK|0o600, 240, 17); err != nil {
		t.Logf("mknod (needs root): %v; block device case left out", err)
		blk = fifo
	}
	for _, p := range []string{fifo, "/dev/zero", t.TempDir(), blk} {
		type res struct {
			errOut string
			code   int
		}
		done := make(chan res, 1)
		go func() {
			_, errOut, code := xray(t, "", p)
			done <- res{errOut, code}
		}()
		select {
		case r := <-done:
			if r.code != 1 || !strings.Contains(r.errOut, "not a regular file") {
				t.Errorf("%s: exit %d, stderr %q; want 1 and \"not a regular file\"", p, r.code, r.errOut)
			}
		case <-time.After(10 * time.Second):
			// Open the FIFO's other end so the blocked open returns.
			if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
			t.Fatalf("inspecting %s blocked", p)
		}
	}
}

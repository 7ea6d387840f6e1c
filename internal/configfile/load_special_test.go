package configfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// TestLoadSpecialFiles: a FIFO or a device node in place of the config
// (planted by whoever writes CIPHERDIR) is refused as malformed at once,
// without blocking in open or reading; a symlink to a valid config is
// still followed.
func TestLoadSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.conf")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{fifo, "/dev/zero", "/dev/null"}
	for _, p := range paths {
		done := make(chan error, 1)
		go func() { _, err := Load(p); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: want ErrMalformed (not a regular file), got %v", p, err)
			}
		case <-time.After(10 * time.Second):
			// Unblock the open so the test binary can exit.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("Load(%s) blocked", p)
		}
	}
	target := filepath.Join(dir, "real.conf")
	if err := os.WriteFile(target, []byte(testutil.TV1Config), 0o400); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ConfDefaultName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(link); err != nil {
		t.Errorf("symlink to a valid config: %v", err)
	}
}

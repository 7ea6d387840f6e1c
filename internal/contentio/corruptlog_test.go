package contentio

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// TestCorruptionLoggedOncePerVersion: a corrupt file is reported once per
// mount (Table), however often it is opened, read and closed again, and
// once more only after it changed (a new ctime).
func TestCorruptionLoggedOncePerVersion(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	var logs testutil.SyncBuffer
	tbl := NewTable()
	opts := Options{Logger: logs.Logger(slog.LevelInfo)}
	path := t.TempDir() + "/f"
	f := openPath(t, tbl, ce, path, opts)
	if _, err := f.WriteAt(make([]byte, 3*bs), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b := readBacking(t, path)
	b[18+16+5] ^= 1 // block 0
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	readCorrupt := func() {
		t.Helper()
		f := openPath(t, tbl, ce, path, opts)
		defer f.Close()
		for range 3 {
			if _, err := f.ReadAt(make([]byte, 10), 0); !errors.Is(err, syscall.EIO) {
				t.Fatalf("read of the corrupt block: %v", err)
			}
		}
	}
	lines := func() int { return strings.Count(logs.String(), "corrupt block") }
	for range 3 {
		readCorrupt()
	}
	if n := lines(); n != 1 {
		t.Fatalf("%d log lines after three open/read/close rounds, want 1:\n%s", n, logs.String())
	}
	// A changed file is a new case.
	time.Sleep(10 * time.Millisecond)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	readCorrupt()
	if n := lines(); n != 2 {
		t.Fatalf("%d log lines after the file changed, want 2:\n%s", n, logs.String())
	}
}

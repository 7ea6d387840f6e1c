package fusefrontend

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMtimeKeeperLastWriterRestores checks that of two page-cache writes in
// flight only the one that ends last puts the mtime back, that it does so
// also when only the other one wrote, and that writes that wrote nothing
// leave the file alone.
func TestMtimeKeeperLastWriterRestores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	kept := unix.Timespec{Sec: 1_000_000_000, Nsec: 5}
	moved := unix.Timespec{Sec: 2_000_000_000, Nsec: 7}
	setMtime := func(ts unix.Timespec) {
		t.Helper()
		if err := restoreMtime(fd, ts); err != nil {
			t.Fatal(err)
		}
	}
	mtime := func() unix.Timespec {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		return st.Mtim
	}
	m := &mtimeKeeper{ts: kept, valid: true}

	for _, firstWrote := range []bool{true, false} {
		setMtime(moved) // what a pwrite would do
		ts1, err := m.hold(fd)
		if err != nil {
			t.Fatal(err)
		}
		ts2, err := m.hold(fd)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.done(fd, ts1, firstWrote); err != nil {
			t.Fatal(err)
		}
		if got := mtime(); got != moved {
			t.Fatalf("mtime %v after the first of two writes ended, want it untouched (%v)", got, moved)
		}
		if err := m.done(fd, ts2, !firstWrote); err != nil {
			t.Fatal(err)
		}
		if got := mtime(); got != kept {
			t.Fatalf("mtime %v after the last write ended, want %v", got, kept)
		}
	}

	setMtime(moved)
	ts, err := m.hold(fd)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.done(fd, ts, false); err != nil {
		t.Fatal(err)
	}
	if got := mtime(); got != moved {
		t.Fatalf("a write that wrote nothing set the mtime to %v", got)
	}
}

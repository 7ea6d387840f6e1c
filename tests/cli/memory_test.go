package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// vmRSSKiB reads the resident set size of pid from /proc/PID/status.
func vmRSSKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return kib
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// TestIdleMountRSS: unlocking with the default scrypt cost (N=65536) needs
// a 64 MiB buffer; an idle mount must have given it back. The goal is at
// most 16 MiB; the bound is generous so that it cannot flake, yet a mount
// that keeps the scrypt buffer (about 70 MiB) fails.
func TestIdleMountRSS(t *testing.T) {
	testutil.RequireFuse(t)
	dir := filepath.Join(t.TempDir(), "cipher")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Default scrypt cost: no -scryptn.
	testutil.Expect(t, run(t, "-init", "-q", "-extpass", "echo test", dir), 0)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	// Some use, as an idle mount has seen.
	data := bytes.Repeat([]byte("x"), 1<<20)
	if err := os.WriteFile(filepath.Join(mnt, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	pid := daemonPid(t, mnt)
	if pid == 0 {
		t.Fatal("daemon not found")
	}
	rss := vmRSSKiB(t, pid)
	t.Logf("idle mount VmRSS: %d KiB (%.1f MiB)", rss, float64(rss)/1024)
	const limitKiB = 32 << 10
	if rss > limitKiB {
		t.Errorf("idle mount VmRSS %d KiB > %d KiB: the scrypt buffer was not given back", rss, limitKiB)
	}
}

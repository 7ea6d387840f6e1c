// Package hostile_test is the hostile-storage suite: for every component
// (forward mount, -reverse mount, -fsck, -fsck -repair, key slots, the
// control socket, gocryptfs-xray) it plants attacks into CIPHERDIR
// (symlinked directories and files pointing at a sentinel directory
// outside, FIFOs and device nodes in place of files and metadata files,
// hard links to files outside, huge gocryptfs.diriv, .name and config
// files, truncated headers, swapped and duplicated key slots), runs the
// real gocryptfs and gocryptfs-xray binaries, and asserts three things:
//
//  1. nothing outside CIPHERDIR changed: a sentinel tree (content, mode,
//     size, link count, mtime) hashes the same before and after;
//  2. nothing hung: every binary run and every walk of a mount has a
//     deadline; a mount whose walk overruns is aborted through
//     /sys/fs/fuse/connections and detached lazily, so the test fails
//     instead of hanging;
//  3. the component gave a clear error (exit code, message or EIO) where
//     the attack broke something, and no plaintext (neither the sentinel
//     secret nor the filesystem's own plaintext) leaked into its output,
//     into CIPHERDIR or outside.
//
// The attacks are values of type attack (attacks_test.go); each
// component has a table of cases naming an attack and what the component
// must answer, so adding an attack to a component is one table entry.
// The binaries are built once in TestMain. docs/threat-model.md cites
// these tests.
package hostile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// The binaries under test, built by TestMain.
var gocryptfsBin, xrayBin string

func TestMain(m *testing.M) {
	b := testutil.Build{Packages: []string{".", "./gocryptfs-xray"}, Version: "v0.0.0-hostiletest", Date: "2001-02-03"}
	os.Exit(testutil.RunWithBinaries(m, b, func(dir string) {
		gocryptfsBin = filepath.Join(dir, "gocryptfs")
		xrayBin = filepath.Join(dir, "gocryptfs-xray")
	}))
}

// stepTimeout bounds every run of a binary and every walk of a mount. A
// correct run of any step here takes well under a second, a few seconds
// on a loaded machine; the bound only turns a hang into a failure (with a
// goroutine dump of the hung binary), it measures no speed.
const stepTimeout = 30 * time.Second

// run runs bin with args and stdin under stepTimeout (testutil.Run: output
// to files, not pipes, which a daemonized mount would keep open). A run
// that overruns is killed with its process group (a mount's daemon still
// reading its config goes too) and fails the test as HUNG.
func run(t *testing.T, stdin string, bin string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{Stdin: stdin, Timeout: stepTimeout, Group: true}, bin, args...)
}

// gocryptfs runs the gocryptfs binary with empty stdin.
func gocryptfs(t *testing.T, args ...string) testutil.Result {
	t.Helper()
	return run(t, "", gocryptfsBin, args...)
}

// xray runs gocryptfs-xray with stdin.
func xray(t *testing.T, stdin string, args ...string) testutil.Result {
	t.Helper()
	return run(t, stdin, xrayBin, args...)
}

// pw is the password flag pair of every filesystem of the suite.
var pw = []string{"-extpass", "echo " + testutil.Password}

// expect fails the test unless r has the exit code and contains every
// want string in stdout or stderr.
func expect(t *testing.T, what string, r testutil.Result, code int, want ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("%s: want exit code %d, got %v", what, code, r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.Stdout+r.Stderr, w) {
			t.Errorf("%s: output lacks %q: %v", what, w, r)
		}
	}
}

// noSecretIn fails the test if out (a binary's output, bytes read from a
// mount) carries the sentinel secret or the filesystem's plaintext where
// the attack must not let it through.
func noSecretIn(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, sentinelSecret) {
		t.Errorf("%s: the sentinel secret from outside CIPHERDIR leaked: %q", what, out)
	}
}

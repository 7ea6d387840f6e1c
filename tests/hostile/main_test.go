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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// run runs bin with args and stdin under stepTimeout and returns its exit
// code and output. stdout and stderr go to files, not pipes: a daemonized
// mount inherits them and keeps them open. A run that overruns gets
// SIGQUIT (a Go program then dumps its goroutines), then SIGKILL with
// its process group, and fails the test.
func run(t *testing.T, stdin string, bin string, args ...string) testutil.Result {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errF.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = outF, errF
	// A group of its own: a hung run is killed with the children it
	// started (a mount's daemon still reading its config), not only
	// itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	err = testutil.WaitExit(cmd, stepTimeout)
	if err != nil && strings.Contains(err.Error(), "no exit after") {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	stdout, _ := os.ReadFile(outF.Name())
	stderr, _ := os.ReadFile(errF.Name())
	res := testutil.Result{Stdout: string(stdout), Stderr: string(stderr)}
	var ee *exec.ExitError
	switch {
	case err != nil && strings.Contains(err.Error(), "no exit after"):
		t.Fatalf("HUNG: %s %q did not exit within %v: %v", filepath.Base(bin), args, stepTimeout, res)
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s %q: %v", bin, args, err)
	}
	return res
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

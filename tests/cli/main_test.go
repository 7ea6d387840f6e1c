// Package cli_test runs the gocryptfs binary end to end: it is built once in
// TestMain, then every test runs it as a subprocess and checks exit codes
// and output against docs/cli.md. Tests that mount use mountFS, which always
// unmounts in t.Cleanup, and skip only when /dev/fuse is absent.
package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gocryptfs/internal/testutil"
)

// gocryptfsBin is the binary under test, built by TestMain.
var gocryptfsBin string

// The version and date stamped into the test binary, as build.bash does.
const (
	testVersion   = "v0.0.0-clitest"
	testBuildDate = "2001-02-03"
)

func TestMain(m *testing.M) {
	if code, ok := lockProbe(); ok {
		os.Exit(code) // this process is a lock probe of locks_test.go
	}
	if code, ok := userJobMain(); ok {
		os.Exit(code) // this process is a worker of users_test.go
	}
	code := testutil.RunWithBinaries(m, testutil.Build{Packages: []string{"."}, Version: testVersion, Date: testBuildDate},
		func(dir string) { gocryptfsBin = filepath.Join(dir, "gocryptfs") })
	if workerDir != "" {
		os.RemoveAll(workerDir)
	}
	os.Exit(code)
}

// run executes gocryptfs with args (bounded by testutil.RunTimeout).
func run(t *testing.T, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, args...)
}

func runWith(t *testing.T, o testutil.RunOptions, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, o, gocryptfsBin, args...)
}

// passfile writes pw to a new file and returns its path.
func passfile(t *testing.T, pw string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "passfile")
	if err := os.WriteFile(p, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// initFS creates a fresh filesystem with password "test" and cheap scrypt.
func initFS(t *testing.T, extra ...string) string {
	t.Helper()
	return testutil.InitFS(t, gocryptfsBin, extra...)
}

// newDir returns a fresh empty directory.
func newDir(t *testing.T) string {
	t.Helper()
	return testutil.NewDir(t, "dir")
}

// mountFS mounts cipherdir on a new directory (daemon mode, so the call
// returns when the mount is ready) and registers the unmount. It returns
// the mount point.
func mountFS(t *testing.T, cipherdir string, args ...string) string {
	t.Helper()
	return testutil.MountFS(t, gocryptfsBin, cipherdir, args...)
}

// daemonPid finds the running gocryptfs process serving mnt.
func daemonPid(t *testing.T, mnt string) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(cmdline, []byte{0})
		if len(args) > 1 && bytes.Contains(cmdline, []byte("-notifypid=")) {
			for _, a := range args {
				if string(a) == mnt {
					return pid
				}
			}
		}
	}
	return 0
}

// processGone reports whether pid has exited (or is a zombie).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// Field 3, after the parenthesized comm, is the state.
	s := string(stat)
	if i := strings.LastIndex(s, ")"); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

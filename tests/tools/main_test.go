// Package tools_test runs the tools around the filesystem end to end:
// -fsck, the control socket and gocryptfs-xray, FIDO2 through stand-in
// tools, -passwd robustness, and fstab-style mounts through mount(8). The
// gocryptfs and gocryptfs-xray binaries are built once in TestMain; every
// mount is unmounted in t.Cleanup, and tests that mount skip only when
// /dev/fuse is missing.
package tools_test

import (
	"bytes"
	"io"
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
	b := testutil.Build{Packages: []string{".", "./gocryptfs-xray"}, Version: "v0.0.0-toolstest", Date: "2001-02-03"}
	os.Exit(testutil.RunWithBinaries(m, b, func(dir string) {
		gocryptfsBin = filepath.Join(dir, "gocryptfs")
		xrayBin = filepath.Join(dir, "gocryptfs-xray")
	}))
}

func gocryptfs(t *testing.T, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, args...)
}

// initFS creates a fresh filesystem with password "test" and cheap scrypt.
func initFS(t *testing.T, extra ...string) string {
	t.Helper()
	return testutil.InitFS(t, gocryptfsBin, extra...)
}

// mountFS mounts cipherdir with the password (daemonized: gocryptfs
// returns once the mount is ready) and registers the unmount. It returns
// the mount point.
func mountFS(t *testing.T, cipherdir string, extra ...string) string {
	t.Helper()
	return testutil.MountFS(t, gocryptfsBin, cipherdir, append([]string{"-q", "-extpass", "echo " + testutil.Password}, extra...)...)
}

// xray runs gocryptfs-xray with stdin.
func xray(t *testing.T, stdin string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{Stdin: stdin}, xrayBin, args...)
}

// readUntil reads r until want appears (or EOF) and returns what it read;
// it fails the test after timeout.
func readUntil(t *testing.T, r io.Reader, want string, timeout time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil || bytes.Contains(got, []byte(want)) {
				ch <- string(got)
				return
			}
		}
	}()
	select {
	case s := <-ch:
		if !strings.Contains(s, want) {
			t.Fatalf("EOF while waiting for %q, got %q", want, s)
		}
		return s
	case <-time.After(timeout):
		t.Fatalf("timeout waiting for %q", want)
	}
	return ""
}

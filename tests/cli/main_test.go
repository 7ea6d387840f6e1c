// Package cli_test runs the gocryptfs binary end to end: it is built once in
// TestMain, then every test runs it as a subprocess and checks exit codes
// and output against CLI.md. Tests that mount use mountFS, which always
// unmounts in t.Cleanup, and skip only when /dev/fuse is absent.
package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gocryptfsBin is the binary under test, built by TestMain.
var gocryptfsBin string

// The version and date stamped into the test binary, as build.bash does.
const (
	testVersion   = "v0.0.0-clitest"
	testBuildDate = "2001-02-03"
)

// projectRoot is the directory holding go.mod.
var projectRoot string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	projectRoot, err = filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "gocryptfs-cli-test.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	gocryptfsBin = filepath.Join(dir, "gocryptfs")
	args := []string{"build", "-o", gocryptfsBin, "-ldflags",
		"-X gocryptfs/internal/buildinfo.gitVersion=" + testVersion + " -X gocryptfs/internal/buildinfo.buildDate=" + testBuildDate}
	if tags := buildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = projectRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building gocryptfs failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is the outcome of one gocryptfs run.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// runOpts tweaks a run.
type runOpts struct {
	stdin string
	dir   string
	env   []string
}

// run executes gocryptfs with args. stdout and stderr go to files rather
// than pipes: a daemonized mount keeps inherited descriptors open, which
// would make waiting for pipe EOF hang.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, runOpts{}, args...)
}

func runWith(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	defer errF.Close()
	cmd := exec.Command(gocryptfsBin, args...)
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.Stdout, cmd.Stderr = outF, errF
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), o.env...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting gocryptfs %q: %v", args, err)
	}
	err = waitExit(cmd, runTimeout)
	stdout, _ := os.ReadFile(outF.Name())
	stderr, _ := os.ReadFile(errF.Name())
	res := result{stdout: string(stdout), stderr: string(stderr)}
	var ee *exec.ExitError
	switch {
	case errors.Is(err, errTimeout):
		t.Fatalf("gocryptfs %q did not exit within %v (goroutine dump in stderr): %v", args, runTimeout, res)
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running gocryptfs %q: %v", args, err)
	}
	return res
}

// runTimeout bounds every gocryptfs run, so that a hang fails the test
// with a goroutine dump instead of stalling the whole suite.
const runTimeout = 60 * time.Second

var errTimeout = errors.New("timeout")

// waitExit waits for a started command. After timeout it sends SIGQUIT
// (a Go program then prints all goroutine stacks to stderr), kills it a
// moment later and returns errTimeout.
func waitExit(cmd *exec.Cmd, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
	}
	cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	return errTimeout
}

// expect fails the test unless r has the exit code and every want string
// appears in stdout or stderr.
func expect(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit code %d, got %v", code, r)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Fatalf("output does not contain %q: %v", w, r)
		}
	}
}

// testPassword is the password of the filesystems the tests create.
const testPassword = "test"

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
	dir := filepath.Join(t.TempDir(), "cipher")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-init", "-q", "-scryptn", "10", "-extpass", "echo " + testPassword}, extra...)
	r := run(t, append(args, dir)...)
	expect(t, r, 0)
	return dir
}

// newDir returns a fresh empty directory.
func newDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireFuse skips the test when FUSE is unavailable.
func requireFuse(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("/dev/fuse not available:", err)
	}
}

// isMounted reports whether dir is a mount point, from /proc/self/mountinfo.
func isMounted(t *testing.T, dir string) bool {
	t.Helper()
	return mountInfoLine(t, dir) != ""
}

// mountInfoLine returns the /proc/self/mounts line for dir, or "".
func mountInfoLine(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && unescapeMount(f[1]) == dir {
			return l
		}
	}
	return ""
}

// unescapeMount undoes the octal escaping of /proc/self/mounts.
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// unmount unmounts dir, retrying while it is busy, lazily as a last resort.
func unmount(t *testing.T, dir string) {
	t.Helper()
	for i := 0; i < 20 && isMounted(t, dir); i++ {
		if out, err := exec.Command("fusermount3", "-u", dir).CombinedOutput(); err != nil {
			t.Logf("fusermount3 -u %s: %v %s", dir, err, out)
			time.Sleep(100 * time.Millisecond)
		}
	}
	if isMounted(t, dir) {
		exec.Command("fusermount3", "-u", "-z", dir).Run()
		t.Errorf("%s was busy, lazily unmounted", dir)
	}
}

// mountFS mounts cipherdir on a new directory (daemon mode, so the call
// returns when the mount is ready) and registers the unmount. It returns
// the mount point.
func mountFS(t *testing.T, cipherdir string, args ...string) string {
	t.Helper()
	requireFuse(t)
	mnt := newDir(t)
	r := run(t, append(args, cipherdir, mnt)...)
	if r.code != 0 {
		t.Fatalf("mount failed: %v", r)
	}
	t.Cleanup(func() { unmount(t, mnt) })
	if !isMounted(t, mnt) {
		t.Fatalf("gocryptfs returned 0 but %s is not mounted: %v", mnt, r)
	}
	return mnt
}

// waitFor polls cond for up to timeout.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
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

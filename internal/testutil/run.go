package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BuildinfoPackage is the package whose variables build.bash stamps with
// -ldflags -X: gitVersion and buildDate.
const BuildinfoPackage = "gocryptfs/internal/buildinfo"

// StampLDFlags returns the -ldflags value that stamps version and date into
// a binary, as build.bash does.
func StampLDFlags(version, date string) string {
	return "-X " + BuildinfoPackage + ".gitVersion=" + version + " -X " + BuildinfoPackage + ".buildDate=" + date
}

// Build says what BuildBinaries builds.
type Build struct {
	// Packages are main packages relative to the project root, like "."
	// and "./gocryptfs-xray".
	Packages []string
	// Version and Date are stamped into the binaries.
	Version, Date string
}

// BuildBinaries builds the main packages of b into a new temp dir, with the
// build tags of the test run (BuildTags) and b's version and date stamped
// in, and returns the dir and a function that removes it. A binary is
// named after the last element of its import path ("gocryptfs",
// "gocryptfs-xray"). The dir name has no dot: mount(8) cuts a type
// "fuse./path/to/helper" at the first dot. It is meant for TestMain, which
// has no testing.TB, so it returns an error.
func BuildBinaries(b Build) (dir string, cleanup func(), err error) {
	root, err := ProjectRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp("", "gocryptfs-test-bin-")
	if err != nil {
		return "", nil, fmt.Errorf("building binaries: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	args := []string{"build", "-o", dir + "/", "-ldflags", StampLDFlags(b.Version, b.Date)}
	if tags := BuildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, b.Packages...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return dir, cleanup, nil
}

// BinaryName is the file name go build gives the binary of a main package
// path relative to the project root: "." is the module "gocryptfs".
func BinaryName(pkg string) string {
	if pkg == "." {
		return "gocryptfs"
	}
	return path.Base(pkg)
}

// Result is the outcome of one program run.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// String formats r for test failure messages.
func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// RunOptions tweak a run; the zero value runs with empty stdin in the
// test's working directory and environment.
type RunOptions struct {
	Stdin string
	Dir   string
	// Env is appended to the test's environment.
	Env []string
	// Timeout bounds the run instead of RunTimeout.
	Timeout time.Duration
	// Group runs the program in a process group of its own, killed whole
	// when the run overruns: the children it started (a mount's daemon)
	// go with it.
	Group bool
}

// RunTimeout bounds every run, so that a hang fails the test with a
// goroutine dump instead of stalling the whole suite.
const RunTimeout = 60 * time.Second

// errTimeout marks a run that RunTimeout cut short.
var errTimeout = errors.New("timeout")

// Run runs bin with args and returns its exit code and output. stdout and
// stderr go to files rather than pipes: a daemonized mount inherits them
// and keeps them open, so waiting for EOF on a pipe would hang. A run
// longer than RunTimeout gets SIGQUIT (a Go program then prints all its
// goroutine stacks to stderr), is killed a moment later and fails the test
// with that output.
func Run(t testing.TB, o RunOptions, bin string, args ...string) Result {
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
	cmd.Stdin = strings.NewReader(o.Stdin)
	cmd.Stdout, cmd.Stderr = outF, errF
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), o.Env...)
	if o.Group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = RunTimeout
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s %q: %v", bin, args, err)
	}
	err = WaitExit(cmd, timeout)
	if o.Group && errors.Is(err, errTimeout) {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	stdout, _ := os.ReadFile(outF.Name())
	stderr, _ := os.ReadFile(errF.Name())
	res := Result{Stdout: string(stdout), Stderr: string(stderr)}
	var ee *exec.ExitError
	switch {
	case errors.Is(err, errTimeout):
		t.Fatalf("HUNG: %s %q did not exit within %v (goroutine dump in stderr): %v", filepath.Base(bin), args, timeout, res)
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s %q: %v", bin, args, err)
	}
	return res
}

// WaitExit waits for a started command. After timeout it sends SIGQUIT,
// kills the process if it is still there two seconds later, and returns an
// error that says so.
func WaitExit(cmd *exec.Cmd, timeout time.Duration) error {
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
	return fmt.Errorf("%s: no exit after %v: %w", cmd.Path, timeout, errTimeout)
}

// Expect fails the test unless r has the exit code and every want string
// appears in its stdout or stderr.
func Expect(t testing.TB, r Result, code int, want ...string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("want exit code %d, got %v", code, r)
	}
	for _, w := range want {
		if !strings.Contains(r.Stdout+r.Stderr, w) {
			t.Fatalf("output does not contain %q: %v", w, r)
		}
	}
}
